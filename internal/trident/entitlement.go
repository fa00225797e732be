package trident

import (
	"fmt"
	"math"
	"strings"

	"github.com/storagebench/storagebench/internal/numfmt"
)

// ServiceLevel is a Google Cloud NetApp Volumes service level.
type ServiceLevel string

// GCNV service levels. Trident's backend option serviceLevel takes flex,
// standard, premium or extreme ("Google Cloud NetApp Volumes backend
// configuration options and examples") and records the level title-cased in
// the volume's config.serviceLevel.
const (
	ServiceLevelFlex     ServiceLevel = "Flex"
	ServiceLevelStandard ServiceLevel = "Standard"
	ServiceLevelPremium  ServiceLevel = "Premium"
	ServiceLevelExtreme  ServiceLevel = "Extreme"
)

// mibPerTiB is each capacity-based level's throughput in MiB/s per TiB of
// volume capacity: Google Cloud "Storage pools overview" gives 16, 64 and 128
// KiB/s per GiB of allocated volume capacity for Standard, Premium and
// Extreme. Flex's 16 KiB/s per GiB counts the pool's capacity, not the
// volume's.
var mibPerTiB = map[ServiceLevel]int64{
	ServiceLevelStandard: 16,
	ServiceLevelPremium:  64,
	ServiceLevelExtreme:  128,
}

// flexMiBPerTiB is Flex's throughput per TiB of pool capacity.
const flexMiBPerTiB = 16

// SaturationNotePercent is the share of the entitlement at or above which a
// saturated step is attributed to it (SaturationNote).
const SaturationNotePercent = 90

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
	tib = int64(1) << 40
)

// parseServiceLevel accepts a level in any case; "" when it is none.
func parseServiceLevel(s string) ServiceLevel {
	for _, l := range []ServiceLevel{ServiceLevelFlex, ServiceLevelStandard, ServiceLevelPremium, ServiceLevelExtreme} {
		if strings.EqualFold(strings.TrimSpace(s), string(l)) {
			return l
		}
	}
	return ""
}

// ServiceLevelOf says which GCNV service level a volume has. In order:
//   - the class names a driver (backendType) that is not a GCNV driver: none;
//   - the TridentVolume's config.serviceLevel, which the GCNV drivers set from
//     the pool the volume was placed in (authoritative);
//   - google-cloud-netapp-volumes-san: Flex, the only level Trident supports
//     for SAN ("Configure Google Cloud NetApp Volumes for SAN workloads");
//   - google-cloud-netapp-volumes: the class's selector, when its labels
//     name exactly one level ("performance=premium"): Trident's examples
//     label virtual pools after their serviceLevel, but labels are free-form,
//     so this is a convention, not a guarantee.
//
// A class without backendType is accepted only through the volume's level;
// when the driver is known from the TridentBackend, pass it as backendType.
func ServiceLevelOf(params map[string]string, v Volume) (ServiceLevel, bool) {
	driver := driverParam(params)
	if driver != "" && driver != GCNV && driver != GCNVSAN {
		return "", false
	}
	if l := parseServiceLevel(v.ServiceLevel); l != "" {
		return l, true
	}
	switch driver {
	case GCNVSAN:
		return ServiceLevelFlex, true
	case GCNV:
		return selectorLevel(Param(params, "selector"))
	}
	return "", false
}

// Entitlement is the throughput a GCNV volume is entitled to.
type Entitlement struct {
	ServiceLevel ServiceLevel
	// ThroughputBytesPerSecond is the volume's throughput limit, reads and
	// writes together; 0 for Flex (the pool's limit is shared) and when the
	// level or capacity is unknown.
	ThroughputBytesPerSecond int64
	// PoolShared: the limit belongs to the storage pool and is shared by all
	// its volumes (Flex).
	PoolShared bool
	// Message explains the figure.
	Message string
}

// EntitlementOf returns the throughput a volume of the level and capacity is
// entitled to: capacity × 16 / 64 / 128 MiB/s per TiB on Standard / Premium /
// Extreme, computed in exact integer arithmetic (rounded down to a byte per
// second). Flex volumes have none of their own: performance belongs to the
// pool and is shared by its volumes (Google Cloud "Performance
// considerations").
//
// capacityBytes must be the PV's real capacity, not the claim's request:
// Trident raises requests below 100 GiB to 100 GiB on Standard, Premium and
// Extreme (1 GiB minimum on Flex) and the PV reports the raised size. With a
// snapshot reserve, GCNV allocates more than the PV shows (Trident divides
// the size by 1 − reserve), so the figure is then a floor. Per-volume
// throughput maxima of very large volumes are not modelled.
func EntitlementOf(level ServiceLevel, capacityBytes int64) Entitlement {
	e := Entitlement{ServiceLevel: level}
	if level == ServiceLevelFlex {
		e.PoolShared = true
		e.Message = fmt.Sprintf("Flex: throughput belongs to the storage pool and is shared by all volumes in the pool; "+
			"the volume has no entitlement of its own (a Flex File pool of the default performance has %d MiB/s per TiB "+
			"of pool capacity; Flex Unified pools, which serve every SAN volume, and custom-performance pools are set "+
			"independently of capacity)", flexMiBPerTiB)
		return e
	}
	rate, ok := mibPerTiB[level]
	if !ok {
		e.Message = fmt.Sprintf("unknown service level %q: no entitlement", string(level))
		return e
	}
	if capacityBytes <= 0 {
		e.Message = fmt.Sprintf("%s: %d MiB/s per TiB of volume capacity; capacity unknown", level, rate)
		return e
	}
	// capacity × rate MiB/s / TiB = capacity × rate / 2^20 bytes per second,
	// split so that nothing overflows.
	e.ThroughputBytesPerSecond = capacityBytes/mib*rate + capacityBytes%mib*rate/mib
	e.Message = fmt.Sprintf("%s: %d MiB/s per TiB of volume capacity; %s gives %s", level, rate,
		FormatCapacity(capacityBytes), FormatMiBPerSecond(e.ThroughputBytesPerSecond))
	return e
}

// PercentOfEntitlement is achieved throughput as a percentage of the
// entitlement, rounded to the nearest integer; 0 without an entitlement.
func PercentOfEntitlement(e Entitlement, achievedBytesPerSecond int64) int32 {
	t := e.ThroughputBytesPerSecond
	if t <= 0 || achievedBytesPerSecond <= 0 {
		return 0
	}
	q, r := achievedBytesPerSecond/t, achievedBytesPerSecond%t
	if q >= math.MaxInt32/100 {
		return math.MaxInt32
	}
	var frac int64
	if t <= math.MaxInt64/100 {
		frac = (r*100 + t/2) / t // r < t: no overflow
	} else {
		frac = int64(math.Round(float64(r) * 100 / float64(t)))
	}
	return int32(q*100 + frac)
}

// SaturationNote explains a saturated step by the volume's entitlement:
// "saturated at 97 % of the volume's 1,500 MiB/s entitlement" when the step
// saturated at SaturationNotePercent or more of it; "" otherwise, and for
// Flex volumes (no entitlement of their own).
func SaturationNote(e Entitlement, achievedBytesPerSecond int64, saturated bool) string {
	if !saturated || e.ThroughputBytesPerSecond <= 0 {
		return ""
	}
	p := PercentOfEntitlement(e, achievedBytesPerSecond)
	if p < SaturationNotePercent {
		return ""
	}
	return fmt.Sprintf("saturated at %d %% of the volume's %s entitlement", p,
		FormatMiBPerSecond(e.ThroughputBytesPerSecond))
}

// FormatMiBPerSecond renders bytes per second in MiB/s with at most two
// decimals (trailing zeros dropped) and thousands separators:
// 6553600 => "6.25 MiB/s", 1572864000 => "1,500 MiB/s".
func FormatMiBPerSecond(bytesPerSecond int64) string {
	return numfmt.Quotient(bytesPerSecond, mib, 2) + " MiB/s"
}

// FormatCapacity renders bytes in TiB from 1 TiB up, else in GiB, with at
// most two decimals: "100 GiB", "12 TiB", "1.5 TiB".
func FormatCapacity(bytes int64) string {
	if bytes >= tib {
		return numfmt.Quotient(bytes, tib, 2) + " TiB"
	}
	return numfmt.Quotient(bytes, gib, 2) + " GiB"
}
