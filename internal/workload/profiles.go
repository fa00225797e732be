package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Profile is a named workload from a published storage characterisation
// (docs/METHODOLOGY.md §2).
type Profile struct {
	// Name is what users write in a benchmark's workload.profile.
	Name string
	// Description says what the workload models.
	Description string
	// Source names the study the workload comes from.
	Source string
	// Spec is the profile's workload: block size, read percentage and
	// pattern from the study; iodepth 16, libaio, direct I/O, a 1 GiB working
	// set per client and incompressible data for all profiles.
	Spec Spec
}

const (
	srcTR4816     = "NetApp TR-4816 (Cloud Volumes ONTAP on Google Cloud)"
	srcTR4383     = "NetApp TR-4383 (ONTAP Cloud on AWS)"
	srcFujitsu    = "Fujitsu, Cloud Volumes ONTAP on Azure"
	srcTR4816Fuj  = "NetApp TR-4816; Fujitsu, Cloud Volumes ONTAP on Azure"
	srcGCNVBlock  = "Google Cloud NetApp Volumes block performance blog (four corners)"
	srcGCNVPerf   = "Google Cloud NetApp Volumes performance page (read/write mix sweep)"
	srcDBLog      = "NetApp TR-4383 (log writes below 10 ms); the Azure study of Cloud Volumes ONTAP (below 15 ms)"
	srcEtcd       = "etcd's hardware guidance (99th-percentile fdatasync below 10 ms)"
	kib           = 1 << 10
	mixNamePrefix = "mix-"
)

// mixBlockSizes and mixReadPercents define the read/write mix sweep: 4 and
// 8 KiB random, 64 and 256 KiB sequential, each at 100, 75, 50, 25, 0 % reads.
var (
	mixBlockSizes = []struct {
		label   string
		bytes   int64
		pattern Pattern
	}{
		{"4k", 4 * kib, Random},
		{"8k", 8 * kib, Random},
		{"64k", 64 * kib, Sequential},
		{"256k", 256 * kib, Sequential},
	}
	mixReadPercents = []int32{100, 75, 50, 25, 0}
	fourCorners     = []string{"seq-read", "seq-write", "rand-read", "rand-write"}
)

func spec(bs int64, read int32, p Pattern) Spec {
	s := BaseSpec()
	s.BlockSizeBytes, s.ReadPercent, s.Pattern = bs, read, p
	return s
}

// LogProfiles are the profiles of a log (syncedLog): the only ones whose
// engine is not libaio with direct I/O at depth 16. The CRD's rules name
// them (a test holds the two together).
func LogProfiles() []string { return []string{"db-log", "etcd"} }

// syncedLog is a log's workload: sequential writes of bs through the page
// cache (as PostgreSQL's wal_sync_method=fdatasync and etcd write), each
// made durable by fdatasync before the next, one job issuing one at a time.
func syncedLog(bs int64) Spec {
	s := spec(bs, 0, Sequential)
	s.IOEngine, s.IODepth, s.Direct = Sync, 1, false
	s.Sync, s.SyncEvery = Fdatasync, 1
	return s
}

var profiles = buildProfiles()

func buildProfiles() map[string]Profile {
	list := []Profile{
		{"oltp", "transactional database: 8 KiB random, 80 % reads", srcTR4816, spec(8*kib, 80, Random)},
		{"oltp-90-10", "transactional database: 8 KiB random, 90 % reads", srcTR4383, spec(8*kib, 90, Random)},
		{"oltp-70-30", "transactional database: 8 KiB random, 70 % reads", srcFujitsu, spec(8*kib, 70, Random)},
		{"streaming-read", "streaming reads: 64 KiB sequential, 100 % reads", srcTR4816Fuj, spec(64*kib, 100, Sequential)},
		{"streaming-write", "streaming writes: 64 KiB sequential, 100 % writes", srcTR4816Fuj, spec(64*kib, 0, Sequential)},
		{"mixed", "mixed reads and writes (VDI-like): 16 KiB random, 50 % reads", srcTR4816, spec(16*kib, 50, Random)},
		{"analytics", "analytics: 16 KiB random, 50 % reads", srcFujitsu, spec(16*kib, 50, Random)},
		{"mongodb", "MongoDB reads: 8 KiB sequential, 100 % reads", srcTR4383, spec(8*kib, 100, Sequential)},
		{"mongodb-update", "MongoDB updates: 8 KiB sequential, 50 % reads", srcTR4383, spec(8*kib, 50, Sequential)},
		{"seq-read", "four corners, sequential read: 64 KiB sequential, 100 % reads", srcGCNVBlock, spec(64*kib, 100, Sequential)},
		{"seq-write", "four corners, sequential write: 64 KiB sequential, 100 % writes", srcGCNVBlock, spec(64*kib, 0, Sequential)},
		{"rand-read", "four corners, random read: 8 KiB random, 100 % reads", srcGCNVBlock, spec(8*kib, 100, Random)},
		{"rand-write", "four corners, random write: 8 KiB random, 100 % writes", srcGCNVBlock, spec(8*kib, 0, Random)},
		{"db-log", "database transaction log: 8 KiB sequential writes through the page cache, fdatasync after each, one at a time", srcDBLog, syncedLog(8 * kib)},
		{"etcd", "etcd's write-ahead log: 4 KiB sequential writes through the page cache, fdatasync after each, one at a time", srcEtcd, syncedLog(4 * kib)},
	}
	for _, bs := range mixBlockSizes {
		for _, r := range mixReadPercents {
			list = append(list, Profile{
				Name: mixName(bs.label, r),
				Description: fmt.Sprintf("read/write mix sweep: %d KiB %s, %d %% reads",
					bs.bytes/kib, bs.pattern, r),
				Source: srcGCNVPerf,
				Spec:   spec(bs.bytes, r, bs.pattern),
			})
		}
	}
	m := make(map[string]Profile, len(list))
	for _, p := range list {
		if _, dup := m[p.Name]; dup {
			panic("workload: duplicate profile " + p.Name)
		}
		m[p.Name] = p
	}
	return m
}

func mixName(bs string, read int32) string {
	return mixNamePrefix + bs + "-" + strconv.Itoa(int(read))
}

// Profiles returns every profile, sorted by name.
func Profiles() []Profile {
	out := make([]Profile, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ProfileNames returns the names of every profile, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the profile with the given name.
func Lookup(name string) (Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

// FourCorners returns the profiles of a four-corners benchmark in the order
// they are usually reported: seq-read, seq-write, rand-read, rand-write.
func FourCorners() []string { return slices.Clone(fourCorners) }

// MixSweep returns the profiles of the read/write mix sweep, ordered by block
// size (4k, 8k random; 64k, 256k sequential) and, within a block size, from
// all reads to all writes: mix-4k-100, mix-4k-75, …, mix-256k-0.
func MixSweep() []string {
	var names []string
	for _, bs := range mixBlockSizes {
		for _, r := range mixReadPercents {
			names = append(names, mixName(bs.label, r))
		}
	}
	return names
}
