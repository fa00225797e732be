package workload

// Pattern is the access pattern of a job.
type Pattern string

const (
	// Random accesses the working set at random offsets (fio randread,
	// randwrite, randrw).
	Random Pattern = "random"
	// Sequential accesses the working set in order (fio read, write, rw).
	Sequential Pattern = "sequential"
)

// Patterns returns the allowed patterns.
func Patterns() []Pattern { return []Pattern{Random, Sequential} }

// IOEngine is the fio ioengine a job uses.
type IOEngine string

const (
	// LibAIO is Linux native asynchronous I/O; it requires direct I/O.
	LibAIO IOEngine = "libaio"
	// IOUring is Linux io_uring.
	IOUring IOEngine = "io_uring"
	// PSync is pread/pwrite; synchronous, so it requires iodepth 1.
	PSync IOEngine = "psync"
	// Sync is read/write with lseek; synchronous, so it requires iodepth 1.
	Sync IOEngine = "sync"
	// PosixAIO is POSIX asynchronous I/O (aio_read/aio_write).
	PosixAIO IOEngine = "posixaio"
)

// IOEngines returns the allowed engines.
func IOEngines() []IOEngine { return []IOEngine{LibAIO, IOUring, PSync, Sync, PosixAIO} }

// Synchronous reports whether the engine completes each I/O before issuing the
// next one, so that fio ignores any iodepth above 1.
func (e IOEngine) Synchronous() bool { return e == PSync || e == Sync }

// SyncMode is how a job makes its writes durable.
type SyncMode string

const (
	// NoSync leaves durability to the storage and the client's cache (or
	// O_DIRECT): the default, as in the published studies.
	NoSync SyncMode = ""
	// Fsync calls fsync(2) after every SyncEvery writes (fio fsync=N).
	Fsync SyncMode = "fsync"
	// Fdatasync calls fdatasync(2) after every SyncEvery writes (fio
	// fdatasync=N): what PostgreSQL's and etcd's logs do.
	Fdatasync SyncMode = "fdatasync"
	// DSync opens the files O_DSYNC (fio sync=dsync): each write returns
	// once durable, so there is no separate sync call to time.
	DSync SyncMode = "dsync"
)

// Syncs returns the allowed sync modes, NoSync first.
func Syncs() []SyncMode { return []SyncMode{NoSync, Fsync, Fdatasync, DSync} }

// Call reports whether the mode issues a sync call of its own, whose
// latency fio reports apart from the writes'.
func (s SyncMode) Call() bool { return s == Fsync || s == Fdatasync }

// Limits enforced by Validate.
const (
	// MinBlockSizeBytes and MaxBlockSizeBytes bound BlockSizeBytes.
	MinBlockSizeBytes = 512
	MaxBlockSizeBytes = 16 << 20
	// MaxIODepth bounds IODepth.
	MaxIODepth = 1024
	// MaxWorkingSetBytesPerClient bounds WorkingSetBytesPerClient (64 TiB).
	MaxWorkingSetBytesPerClient = 64 << 40
	// MaxCompressPercent bounds CompressPercent.
	MaxCompressPercent = 99
	// MaxDedupePercent bounds DedupePercent.
	MaxDedupePercent = 100
	// MaxSyncEvery bounds SyncEvery.
	MaxSyncEvery = 1 << 20
)

// Spec is what every fio job of a benchmark does. All fields are required;
// Resolve fills them from a profile or the base spec.
type Spec struct {
	// BlockSizeBytes is the size of each I/O: a power of two from 512 B to
	// 16 MiB.
	BlockSizeBytes int64 `json:"blockSizeBytes"`
	// ReadPercent is the share of I/Os that are reads, 0..100 (fio
	// rwmixread); the rest are writes.
	ReadPercent int32 `json:"readPercent"`
	// Pattern is random or sequential.
	Pattern Pattern `json:"pattern"`
	// IODepth is the number of outstanding I/Os per fio job, 1..1024. Queue
	// depth load steps override it.
	IODepth int32 `json:"ioDepth"`
	// IOEngine is the fio ioengine.
	IOEngine IOEngine `json:"ioEngine"`
	// Direct opens files with O_DIRECT, bypassing the client page cache so
	// that the storage, not client memory, is measured.
	Direct bool `json:"direct"`
	// WorkingSetBytesPerClient is the amount of data each client reads and
	// overwrites: at least one block, at most 64 TiB, a multiple of the block
	// size. Size it well beyond any cache to measure the backend.
	WorkingSetBytesPerClient int64 `json:"workingSetBytesPerClient"`
	// CompressPercent is how compressible written data is: 0 means
	// incompressible random data (the default, so that inline compression in
	// the storage does not flatter results); 1..99 is passed to fio as
	// buffer_compress_percentage.
	CompressPercent int32 `json:"compressPercent"`
	// DedupePercent is the share of written buffers that repeat an earlier
	// one, 0..100 (fio dedupe_percentage): 0, the default, keeps inline
	// deduplication from flattering results, as CompressPercent 0 does
	// compression.
	DedupePercent int32 `json:"dedupePercent,omitempty"`
	// Sync is how writes are made durable (NoSync by default), and
	// SyncEvery how many writes each sync call follows (Fsync and
	// Fdatasync only; 0 otherwise).
	Sync      SyncMode `json:"sync,omitempty"`
	SyncEvery int32    `json:"syncEvery,omitempty"`
}

// HasReads reports whether the workload issues reads.
func (s Spec) HasReads() bool { return s.ReadPercent > 0 }

// HasWrites reports whether the workload issues writes.
func (s Spec) HasWrites() bool { return s.ReadPercent < 100 }

// Overrides changes selected fields of a profile. A nil field keeps the
// profile's value.
type Overrides struct {
	BlockSizeBytes           *int64
	ReadPercent              *int32
	Pattern                  *Pattern
	IODepth                  *int32
	IOEngine                 *IOEngine
	Direct                   *bool
	WorkingSetBytesPerClient *int64
	CompressPercent          *int32
	DedupePercent            *int32
	Sync                     *SyncMode
	SyncEvery                *int32
}

// Apply returns s with every non-nil override applied. It does not validate.
func (o Overrides) Apply(s Spec) Spec {
	if o.BlockSizeBytes != nil {
		s.BlockSizeBytes = *o.BlockSizeBytes
	}
	if o.ReadPercent != nil {
		s.ReadPercent = *o.ReadPercent
	}
	if o.Pattern != nil {
		s.Pattern = *o.Pattern
	}
	if o.IODepth != nil {
		s.IODepth = *o.IODepth
	}
	if o.IOEngine != nil {
		s.IOEngine = *o.IOEngine
	}
	if o.Direct != nil {
		s.Direct = *o.Direct
	}
	if o.WorkingSetBytesPerClient != nil {
		s.WorkingSetBytesPerClient = *o.WorkingSetBytesPerClient
	}
	if o.CompressPercent != nil {
		s.CompressPercent = *o.CompressPercent
	}
	if o.DedupePercent != nil {
		s.DedupePercent = *o.DedupePercent
	}
	if o.Sync != nil {
		s.Sync = *o.Sync
		// A sync call without its own count follows every write; another
		// mode has none.
		s.SyncEvery = 0
		if s.Sync.Call() {
			s.SyncEvery = 1
		}
	}
	if o.SyncEvery != nil {
		s.SyncEvery = *o.SyncEvery
	}
	return s
}

// BaseSpec is the spec Resolve starts from when no profile is named: 4 KiB
// random reads, iodepth 16, libaio, direct I/O, a 1 GiB working set per client
// and incompressible data.
func BaseSpec() Spec {
	return Spec{
		BlockSizeBytes:           4 << 10,
		ReadPercent:              100,
		Pattern:                  Random,
		IODepth:                  defaultIODepth,
		IOEngine:                 LibAIO,
		Direct:                   true,
		WorkingSetBytesPerClient: defaultWorkingSet,
		CompressPercent:          0,
	}
}

const (
	defaultIODepth    = 16
	defaultWorkingSet = 1 << 30
)
