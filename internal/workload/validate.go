package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Validate checks s and returns the first violated rule, in field order, as a
// *FieldError, or nil if s is valid.
func Validate(s Spec) error {
	if errs := validate(s, true); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ValidateAll checks s and returns every violated rule, in field order, each a
// *FieldError. It returns nil if s is valid.
func ValidateAll(s Spec) []error {
	return validate(s, false)
}

func validate(s Spec, firstOnly bool) []error {
	var errs []error
	add := func(e *FieldError) bool {
		errs = append(errs, e)
		return firstOnly
	}

	if !validBlockSize(s.BlockSizeBytes) {
		if add(fieldErr("workload.blockSizeBytes", i64(s.BlockSizeBytes),
			"must be a power of two between 512 B and 16 MiB")) {
			return errs
		}
	}
	if s.ReadPercent < 0 || s.ReadPercent > 100 {
		if add(fieldErr("workload.readPercent", i32(s.ReadPercent), "must be between 0 and 100")) {
			return errs
		}
	}
	if s.Pattern != Random && s.Pattern != Sequential {
		if add(fieldErr("workload.pattern", strconv.Quote(string(s.Pattern)),
			"must be one of "+join(Patterns()))) {
			return errs
		}
	}
	switch {
	case s.IODepth < 1 || s.IODepth > MaxIODepth:
		if add(fieldErr("workload.ioDepth", i32(s.IODepth), "must be between 1 and 1024")) {
			return errs
		}
	case s.IOEngine.Synchronous() && s.IODepth != 1:
		if add(fieldErr("workload.ioDepth", i32(s.IODepth), fmt.Sprintf(
			"must be 1 with ioEngine %s: fio's synchronous engines issue one I/O at a time per job and silently ignore a deeper iodepth",
			s.IOEngine))) {
			return errs
		}
	}
	if !validEngine(s.IOEngine) {
		if add(fieldErr("workload.ioEngine", strconv.Quote(string(s.IOEngine)),
			"must be one of "+join(IOEngines()))) {
			return errs
		}
	}
	if s.IOEngine == LibAIO && !s.Direct {
		if add(fieldErr("workload.direct", "false",
			"must be true with ioEngine libaio: without O_DIRECT Linux completes libaio submissions synchronously, so the iodepth would silently be 1")) {
			return errs
		}
	}
	// The working set is compared with the block size only when the block
	// size is valid, so a bad block size is reported once.
	ws, bs := s.WorkingSetBytesPerClient, s.BlockSizeBytes
	if !validBlockSize(bs) {
		bs = 1
	}
	switch {
	case ws > MaxWorkingSetBytesPerClient:
		if add(fieldErr("workload.workingSetBytesPerClient", i64(ws), "must be at most 64 TiB")) {
			return errs
		}
	case ws < bs:
		if add(fieldErr("workload.workingSetBytesPerClient", i64(ws),
			fmt.Sprintf("must be at least one block (blockSizeBytes %d)", bs))) {
			return errs
		}
	case ws%bs != 0:
		if add(fieldErr("workload.workingSetBytesPerClient", i64(ws),
			fmt.Sprintf("must be a multiple of blockSizeBytes (%d)", bs))) {
			return errs
		}
	}
	for _, e := range s.writeErrors() {
		if add(e) {
			return errs
		}
	}
	return errs
}

// writeErrors are the broken rules of what writes carry (compressibility,
// repeated buffers) and how they are made durable, in field order.
func (s Spec) writeErrors() []*FieldError {
	var errs []*FieldError
	if s.CompressPercent < 0 || s.CompressPercent > MaxCompressPercent {
		errs = append(errs, fieldErr("workload.compressPercent", i32(s.CompressPercent),
			"must be between 0 (incompressible) and 99"))
	}
	if s.DedupePercent < 0 || s.DedupePercent > MaxDedupePercent {
		errs = append(errs, fieldErr("workload.dedupePercent", i32(s.DedupePercent),
			"must be between 0 (no repeated buffers) and 100"))
	}
	if e := s.syncError(); e != nil {
		errs = append(errs, e)
	}
	return errs
}

// syncError is the first broken rule of Sync and SyncEvery, or nil.
func (s Spec) syncError() *FieldError {
	switch {
	case !slices.Contains(Syncs(), s.Sync):
		return fieldErr("workload.sync", strconv.Quote(string(s.Sync)), "must be one of fsync, fdatasync, dsync, or unset")
	case s.Sync != NoSync && !s.HasWrites():
		return fieldErr("workload.sync", string(s.Sync), "needs writes: readPercent must be below 100")
	case s.Sync.Call() && (s.SyncEvery < 1 || s.SyncEvery > MaxSyncEvery):
		return fieldErr("workload.syncEvery", i32(s.SyncEvery), fmt.Sprintf("must be between 1 and %d writes per %s", MaxSyncEvery, s.Sync))
	case !s.Sync.Call() && s.SyncEvery != 0:
		return fieldErr("workload.syncEvery", i32(s.SyncEvery), "is set only with sync fsync or fdatasync: "+syncEveryWhy(s.Sync))
	}
	return nil
}

func syncEveryWhy(s SyncMode) string {
	if s == DSync {
		return "with dsync every write is durable on its own"
	}
	return "without sync no call is made"
}

func validBlockSize(b int64) bool {
	return b >= MinBlockSizeBytes && b <= MaxBlockSizeBytes && b&(b-1) == 0
}

func validEngine(e IOEngine) bool {
	for _, a := range IOEngines() {
		if e == a {
			return true
		}
	}
	return false
}

func join[T ~string](vs []T) string {
	ss := make([]string, len(vs))
	for i, v := range vs {
		ss[i] = string(v)
	}
	return strings.Join(ss, ", ")
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }
func i32(v int32) string { return strconv.FormatInt(int64(v), 10) }

// MaxVerifiedBlocksPerClient bounds the blocks a client of a run that
// verifies keeps a generation for (2 bytes each: 8 MiB of the client's
// memory; 16 GiB of working set at 4 KiB).
const MaxVerifiedBlocksPerClient = 1 << 22

// Verifiable checks that a workload can verify what it writes: it must
// write; with direct I/O, so that what is read back is the storage's and
// not the client's page cache; with incompressible data (its writes carry
// patterns instead); and within MaxVerifiedBlocksPerClient blocks.
func (s Spec) Verifiable() error {
	switch {
	case !s.HasWrites():
		return &FieldError{Field: "workload.readPercent", Value: fmt.Sprint(s.ReadPercent),
			Allowed: "must be below 100 with verify: a workload that only reads writes nothing to verify"}
	case !s.Direct:
		return &FieldError{Field: "workload.direct", Value: "false",
			Allowed: "must be true with verify: a read-back through the page cache would check the client's memory, not the storage"}
	case s.CompressPercent != 0:
		return &FieldError{Field: "workload.compressPercent", Value: fmt.Sprint(s.CompressPercent),
			Allowed: "must be 0 with verify: verified writes carry a pattern that describes their block instead of fio's buffers"}
	case s.DedupePercent != 0:
		return &FieldError{Field: "workload.dedupePercent", Value: fmt.Sprint(s.DedupePercent),
			Allowed: "must be 0 with verify: verified writes carry a pattern that describes their block instead of fio's buffers"}
	case s.WorkingSetBytesPerClient/s.BlockSizeBytes > MaxVerifiedBlocksPerClient:
		return &FieldError{Field: "workload.workingSetBytesPerClient", Value: fmt.Sprint(s.WorkingSetBytesPerClient),
			Allowed: fmt.Sprintf("must hold at most %d blocks with verify (the client keeps a generation per block): lower it or raise the block size", MaxVerifiedBlocksPerClient)}
	}
	return nil
}
