package trident

import (
	"math"
	"strings"
	"testing"
)

const giB = int64(1) << 30

func TestEntitlementOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		level      ServiceLevel
		capacity   int64
		want       int64
		poolShared bool
		msgIn      []string
	}{
		// 100 GiB is the smallest Standard/Premium/Extreme volume Trident
		// creates: a 50 GiB claim gets a 100 GiB PV.
		{"100 GiB premium", ServiceLevelPremium, 100 * giB, 6_553_600, false, []string{"Premium", "64 MiB/s per TiB", "100 GiB gives 6.25 MiB/s"}},
		{"100 GiB standard", ServiceLevelStandard, 100 * giB, 1_638_400, false, []string{"1.56 MiB/s"}},
		{"100 GiB extreme", ServiceLevelExtreme, 100 * giB, 13_107_200, false, []string{"12.5 MiB/s"}},
		{"1 TiB extreme", ServiceLevelExtreme, 1024 * giB, 128 << 20, false, []string{"1 TiB gives 128 MiB/s"}},
		{"1 TiB standard", ServiceLevelStandard, 1024 * giB, 16 << 20, false, nil},
		{"12 TiB premium", ServiceLevelPremium, 12 * 1024 * giB, 768 << 20, false, []string{"12 TiB gives 768 MiB/s"}},
		{"1.5 TiB extreme", ServiceLevelExtreme, 1536 * giB, 192 << 20, false, []string{"1.5 TiB gives 192 MiB/s"}},
		{"11.72 TiB extreme", ServiceLevelExtreme, 12000 * giB, 1500 << 20, false, []string{"1,500 MiB/s"}},
		// 1 byte more than 1 GiB: 64×(2^30+1)/2^20 = 65536.00006 → floored.
		{"odd bytes floor", ServiceLevelPremium, giB + 1, 65_536, false, nil},
		{"one byte", ServiceLevelExtreme, 1, 0, false, nil},
		{"flex", ServiceLevelFlex, 100 * giB, 0, true, []string{"Flex", "storage pool", "shared by all volumes", "Flex File pool of the default performance has 16 MiB/s per TiB of pool capacity", "Flex Unified", "independently of capacity"}},
		{"flex no capacity", ServiceLevelFlex, 0, 0, true, nil},
		{"zero capacity", ServiceLevelPremium, 0, 0, false, []string{"capacity unknown"}},
		{"negative capacity", ServiceLevelStandard, -5, 0, false, []string{"capacity unknown"}},
		{"unknown level", "Ultra", 100 * giB, 0, false, []string{`unknown service level "Ultra"`}},
		{"empty level", "", 100 * giB, 0, false, []string{"unknown service level"}},
		{"huge capacity", ServiceLevelExtreme, math.MaxInt64, math.MaxInt64/(1<<20)*128 + (math.MaxInt64%(1<<20))*128/(1<<20), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := EntitlementOf(tc.level, tc.capacity)
			if e.ServiceLevel != tc.level || e.ThroughputBytesPerSecond != tc.want || e.PoolShared != tc.poolShared {
				t.Errorf("EntitlementOf() = %+v, want throughput %d, poolShared %v", e, tc.want, tc.poolShared)
			}
			if e.Message == "" {
				t.Error("empty message")
			}
			for _, s := range tc.msgIn {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q lacks %q", e.Message, s)
				}
			}
		})
	}
}

func TestPercentOfEntitlement(t *testing.T) {
	e := Entitlement{ServiceLevel: ServiceLevelExtreme, ThroughputBytesPerSecond: 1500 << 20}
	for _, tc := range []struct {
		name     string
		e        Entitlement
		achieved int64
		want     int32
	}{
		{"97 %", e, 1455 << 20, 97},
		{"rounds half up", Entitlement{ThroughputBytesPerSecond: 200}, 189, 95},
		{"rounds down", Entitlement{ThroughputBytesPerSecond: 200}, 188, 94},
		{"exact", e, 1500 << 20, 100},
		{"above", e, 3000 << 20, 200},
		{"zero achieved", e, 0, 0},
		{"negative achieved", e, -1, 0},
		{"flex", Entitlement{ServiceLevel: ServiceLevelFlex, PoolShared: true}, 1 << 30, 0},
		{"no entitlement", Entitlement{}, 100, 0},
		{"clamped", Entitlement{ThroughputBytesPerSecond: 1}, math.MaxInt64, math.MaxInt32},
		{"huge entitlement", Entitlement{ThroughputBytesPerSecond: math.MaxInt64}, math.MaxInt64 / 2, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PercentOfEntitlement(tc.e, tc.achieved); got != tc.want {
				t.Errorf("PercentOfEntitlement() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSaturationNote(t *testing.T) {
	e := Entitlement{ServiceLevel: ServiceLevelExtreme, ThroughputBytesPerSecond: 1500 << 20}
	small := EntitlementOf(ServiceLevelPremium, 100*giB)
	for _, tc := range []struct {
		name      string
		e         Entitlement
		achieved  int64
		saturated bool
		want      string
	}{
		{"97 %", e, 1455 << 20, true, "saturated at 97 % of the volume's 1,500 MiB/s entitlement"},
		{"exactly 90 %", e, 1350 << 20, true, "saturated at 90 % of the volume's 1,500 MiB/s entitlement"},
		{"above entitlement", e, 1600 << 20, true, "saturated at 107 % of the volume's 1,500 MiB/s entitlement"},
		{"fractional entitlement", small, 6_400_000, true, "saturated at 98 % of the volume's 6.25 MiB/s entitlement"},
		{"89 %", e, 1335 << 20, true, ""},
		{"not saturated", e, 1455 << 20, false, ""},
		{"flex", EntitlementOf(ServiceLevelFlex, 100*giB), 1 << 30, true, ""},
		{"unknown", Entitlement{}, 1 << 30, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SaturationNote(tc.e, tc.achieved, tc.saturated); got != tc.want {
				t.Errorf("SaturationNote() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestServiceLevelOf(t *testing.T) {
	gcnv := map[string]string{"backendType": "google-cloud-netapp-volumes"}
	for _, tc := range []struct {
		name   string
		params map[string]string
		vol    Volume
		want   ServiceLevel
		ok     bool
	}{
		{"volume premium", gcnv, Volume{ServiceLevel: "Premium"}, ServiceLevelPremium, true},
		{"volume lower case", gcnv, Volume{ServiceLevel: "extreme"}, ServiceLevelExtreme, true},
		{"volume flex", gcnv, Volume{ServiceLevel: "Flex"}, ServiceLevelFlex, true},
		{"volume wins over selector", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "performance=standard"},
			Volume{ServiceLevel: "Premium"}, ServiceLevelPremium, true},
		{"selector", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "performance=extreme"},
			Volume{}, ServiceLevelExtreme, true},
		{"selector several terms", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "cloud=gcp; performance = Premium"},
			Volume{}, ServiceLevelPremium, true},
		{"selector double equals", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "tier==standard; zone=a"},
			Volume{}, ServiceLevelStandard, true},
		{"selector with commas, which Trident refuses", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "tier=standard,zone=a"},
			Volume{}, "", false},
		{"selector not equal names no level", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "performance!=standard"},
			Volume{}, "", false},
		{"selector ambiguous", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "performance=premium; fallback=extreme"},
			Volume{}, "", false},
		{"selector no level", map[string]string{"backendType": "google-cloud-netapp-volumes", "selector": "performance=gold"},
			Volume{}, "", false},
		{"prefixed keys", map[string]string{"trident.netapp.io/backendType": "google-cloud-netapp-volumes", "trident.netapp.io/selector": "performance=extreme"},
			Volume{}, ServiceLevelExtreme, true},
		{"san is flex", map[string]string{"backendType": "google-cloud-netapp-volumes-san"}, Volume{}, ServiceLevelFlex, true},
		{"unknown volume level", gcnv, Volume{ServiceLevel: "Ultra"}, "", false},
		{"ontap class", map[string]string{"backendType": "ontap-nas", "selector": "performance=premium"},
			Volume{ServiceLevel: "Premium"}, "", false},
		{"anf class", map[string]string{"backendType": "azure-netapp-files"}, Volume{ServiceLevel: "Premium"}, "", false},
		{"no backendType, volume says", map[string]string{"selector": "performance=premium"}, Volume{ServiceLevel: "Standard"}, ServiceLevelStandard, true},
		{"no backendType, selector only", map[string]string{"selector": "performance=premium"}, Volume{}, "", false},
		{"nothing", nil, Volume{}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ServiceLevelOf(tc.params, tc.vol)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ServiceLevelOf() = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{FormatMiBPerSecond(6_553_600), "6.25 MiB/s"},
		{FormatMiBPerSecond(1500 << 20), "1,500 MiB/s"},
		{FormatMiBPerSecond(1_048_575), "1 MiB/s"},
		{FormatMiBPerSecond(0), "0 MiB/s"},
		{FormatMiBPerSecond(-7), "0 MiB/s"},
		{FormatMiBPerSecond(1_234_567 << 20), "1,234,567 MiB/s"},
		{FormatMiBPerSecond(1<<20 + 1<<19), "1.5 MiB/s"},
		{FormatCapacity(100 * giB), "100 GiB"},
		{FormatCapacity(12 << 40), "12 TiB"},
		{FormatCapacity(1536 * giB), "1.5 TiB"},
		{FormatCapacity(2000 << 40), "2,000 TiB"},
		{FormatCapacity(giB / 2), "0.5 GiB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
