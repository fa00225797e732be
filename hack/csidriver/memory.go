package main

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A memory volume (storagebench.test/medium: memory) keeps its data on a
// tmpfs of its own, of the volume's capacity, mounted in its directory:
//
//	volumes/<id>/data          filesystem: the tmpfs itself, mode 0777
//	volumes/<id>/memory        block: the tmpfs, mode 0700, holding
//	volumes/<id>/memory/data   the sparse file behind the loop devices
//
// so a filesystem volume's data has the same path on either medium, and its
// size is enforced. Everything else (the record, the publications) stays on
// the root's disk, and so do snapshots: a snapshot of a memory volume is a
// copy on disk; a clone may go either way. The mounts outlive the driver,
// so a restarted driver finds its memory volumes as they were. A tmpfs found
// gone (the machine restarted, or csi.sh down unmounted it) is mounted
// again, empty, when the volume is next used: the volume comes back zeroed,
// as a RAM disk does.
//
// The capacities of all memory volumes add up to at most the driver's
// --memory-limit, so that they cannot, once written, take the machine's
// memory (a tmpfs takes memory only as it is written, and there is no
// swap): a volume beyond the limit on its own is OutOfRange, one that does
// not fit beside the others is ResourceExhausted (CSI's answers to a
// capacity the plugin does not allow and to a quota).
const memoryDir = "memory"

// inMemory reports whether a volume's data is in memory, from its stored
// parameters (checked when it was created).
func (m *volumeMeta) inMemory() bool {
	b, err := parseBehaviour(m.Parameters)
	return err == nil && b.memory
}

// memoryPaths are, in the directory of a memory volume, its tmpfs's mount
// point and its data.
func memoryPaths(dir string, block bool) (mnt, data string) {
	if block {
		mnt = filepath.Join(dir, memoryDir)
		return mnt, filepath.Join(mnt, dataName)
	}
	data = filepath.Join(dir, dataName)
	return data, data
}

// makeMemoryData makes a memory volume's data in its (new) directory dir: a
// tmpfs of size bytes, then, for a block volume, a sparse file of size
// bytes on it. With src set, src's data (a directory or a file) is copied
// in.
func makeMemoryData(dir string, block bool, size int64, src string) error {
	mnt, data := memoryPaths(dir, block)
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return err
	}
	if err := mountTmpfs(mnt, size, block); err != nil {
		return err
	}
	var err error
	switch {
	case src == "" && block:
		err = makeData(data, true, size)
	case src == "":
	case block:
		if err = copyData(src, data); err == nil {
			err = os.Truncate(data, size)
		}
	default:
		// Into the tmpfs itself: its contents, owners and modes.
		_, err = command("cp", "-a", "--sparse=always", src+"/.", data)
	}
	if err != nil && strings.Contains(err.Error(), "No space left on device") {
		return status.Errorf(codes.OutOfRange, "the source's data does not fit a memory volume of %d bytes: %v", size, err)
	}
	return err
}

// mountTmpfs mounts a tmpfs of size bytes on path, its root any pod's to
// write (a filesystem volume) or root's only (a block volume's file).
func mountTmpfs(path string, size int64, block bool) error {
	mode := "0777"
	if block {
		mode = "0700"
	}
	opts := fmt.Sprintf("size=%d,mode=%s", size, mode)
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount a tmpfs (%s) on %s: %w", opts, path, err)
	}
	return nil
}

// resizeTmpfs makes the tmpfs on path size bytes.
func resizeTmpfs(path string, size int64) error {
	opts := fmt.Sprintf("size=%d", size)
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("remount the tmpfs on %s (%s): %w", path, opts, err)
	}
	return nil
}

// unmountTmpfs unmounts a memory volume's tmpfs at path, if it is mounted.
// A busy one (a loop device not yet let go, say) is detached lazily: its
// memory is freed when its last user lets go.
func unmountTmpfs(path string) error {
	mounted, err := isMountPoint(path)
	if err != nil || !mounted {
		return err
	}
	err = unix.Unmount(path, 0)
	if errors.Is(err, unix.EBUSY) {
		log.Printf("csidriver: %s is busy; detaching it lazily", path)
		err = unix.Unmount(path, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	return nil
}

// removeTree removes an object's directory, unmounting first a memory
// volume's tmpfs in it (which os.RemoveAll would empty, then fail on).
func removeTree(dir string) error {
	for _, name := range []string{dataName, memoryDir} {
		if err := unmountTmpfs(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

// volumeData is the path of a volume's data. A memory volume whose tmpfs
// is gone gets an empty one again, under a lock on its directory that the
// driver's other processes (sharing the root) respect.
func (s *store) volumeData(m *volumeMeta) (string, error) {
	dir := s.dir(volumesDir, m.ID)
	if !m.inMemory() {
		return filepath.Join(dir, dataName), nil
	}
	mnt, data := memoryPaths(dir, m.Block)
	if mounted, err := isMountPoint(mnt); err != nil || mounted {
		return data, internal(err)
	}
	unlock, err := flock(dir)
	if err != nil {
		return "", internal(err)
	}
	defer unlock()
	if mounted, err := isMountPoint(mnt); err != nil || mounted {
		return data, internal(err)
	}
	log.Printf("csidriver: memory volume %s: its tmpfs at %s is gone (a restart of the machine, or csi.sh down); mounting an empty one", m.ID, mnt)
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		return "", internal(err)
	}
	if err := mountTmpfs(mnt, m.Capacity, m.Block); err != nil {
		return "", internal(err)
	}
	if m.Block {
		if err := makeData(data, true, m.Capacity); err != nil {
			return "", internal(err)
		}
	}
	return data, nil
}

// flock takes an exclusive advisory lock on a directory, across processes.
func flock(dir string) (unlock func(), err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { _ = unix.Close(fd) }, nil
}

// memoryBudget keeps the memory volumes' capacities within the limit: the
// records' capacities plus the creates and expansions under way.
type memoryBudget struct {
	mu      sync.Mutex
	limit   int64
	pending map[string]int64 // volume id → the capacity it is being given
}

// reserveMemory reserves size bytes for memory volume id (a new one, or one
// growing to size), or refuses: OutOfRange when size exceeds the limit on
// its own, ResourceExhausted when it does not fit beside the other memory
// volumes. release gives the reservation back once the volume's record
// says its new size (or the operation failed).
func (s *store) reserveMemory(id string, size int64) (release func(), err error) {
	b := &s.memory
	if size > b.limit {
		return nil, status.Errorf(codes.OutOfRange, "a memory volume of %d bytes exceeds the driver's limit on memory volumes, %d bytes (--memory-limit)", size, b.limit)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[id]; ok {
		return nil, status.Errorf(codes.Aborted, "an operation on memory volume %s is pending", id)
	}
	held, err := s.memoryHeld()
	if err != nil {
		return nil, err
	}
	for v, n := range b.pending {
		held[v] = max(held[v], n)
	}
	var others int64
	for v, n := range held {
		if v != id {
			others += n
		}
	}
	if others+size > b.limit {
		return nil, status.Errorf(codes.ResourceExhausted, "memory volume %s of %d bytes does not fit: the other memory volumes take %d of the driver's %d bytes (--memory-limit)", id, size, others, b.limit)
	}
	b.pending[id] = size
	return func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	}, nil
}

// memoryHeld reads the capacity of every memory volume on record.
func (s *store) memoryHeld() (map[string]int64, error) {
	ids, err := s.ids(volumesDir)
	if err != nil {
		return nil, err
	}
	held := map[string]int64{}
	for _, id := range ids {
		m, err := s.volume(id)
		if status.Code(err) == codes.NotFound {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, err
		}
		if m.inMemory() {
			held[id] = m.Capacity
		}
	}
	return held, nil
}

// memoryLimit reads --memory-limit, a Kubernetes quantity ("4Gi"); empty
// is a quarter of the machine's memory.
func memoryLimit(flag string) (int64, error) {
	if flag != "" {
		q, err := resource.ParseQuantity(flag)
		if err != nil || q.Sign() < 0 {
			return 0, fmt.Errorf("--memory-limit %q: want a quantity of bytes, such as 4Gi", flag)
		}
		return q.Value(), nil
	}
	total, err := memTotal()
	if err != nil {
		return 0, fmt.Errorf("--memory-limit: %w", err)
	}
	return total / 4, nil
}

// memTotal is the machine's memory in bytes, as /proc/meminfo tells it.
func memTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24683656 kB
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: %q: %w", sc.Text(), err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/meminfo tells no MemTotal")
}
