package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The driver's state lives on disk under --root, so a restarted driver (or a
// node process next to the controller process, sharing the same root) sees
// it all:
//
//	volumes/<id>/meta.json          the controller's record (volumeMeta)
//	volumes/<id>/data               a directory (filesystem) or a sparse file (block);
//	                                a memory volume's is on a tmpfs (memory.go)
//	volumes/<id>/node-<node>.json   one node's publications (nodeState)
//	snapshots/<id>/meta.json        snapshotMeta
//	snapshots/<id>/data             a copy of the volume's data
//
// An object is built under a ".new-<id>" sibling and renamed into place, and
// a deleted one is renamed to ".del-<id>-…" before it is removed, so a
// directory named <id> always holds a complete object. Each file is written
// to a temporary name and renamed. An id is the object's CSI name, which must
// be a safe path component (checkName).
const (
	volumesDir   = "volumes"
	snapshotsDir = "snapshots"
	metaFile     = "meta.json"
	dataName     = "data"
)

// volumeMeta is a volume's record.
type volumeMeta struct {
	ID             string            `json:"id"`
	Capacity       int64             `json:"capacityBytes"`
	Block          bool              `json:"block"`
	Parameters     map[string]string `json:"parameters,omitempty"`
	SourceSnapshot string            `json:"sourceSnapshot,omitempty"`
	SourceVolume   string            `json:"sourceVolume,omitempty"`
	Created        time.Time         `json:"created"`
}

// snapshotMeta is a snapshot's record. Parameters are the source volume's,
// VolumeSnapshotClass parameters are kept in SnapshotParameters.
type snapshotMeta struct {
	ID                 string            `json:"id"`
	SourceVolume       string            `json:"sourceVolume"`
	Size               int64             `json:"sizeBytes"`
	Block              bool              `json:"block"`
	Parameters         map[string]string `json:"parameters,omitempty"`
	SnapshotParameters map[string]string `json:"snapshotParameters,omitempty"`
	Created            time.Time         `json:"created"`
}

// nodeState is what one node published of a volume, by target path.
type nodeState struct {
	Publications map[string]publication `json:"publications"`
}

// publication is one NodePublishVolume: a bind mount at its target path, of
// the volume directory or, for a block volume, of a loop device on its file.
type publication struct {
	ReadOnly bool   `json:"readOnly"`
	Loop     string `json:"loop,omitempty"`
}

// nameRE is what a volume, snapshot or node name may be: one path component
// that is neither "." nor "..".
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// checkName refuses a name that is empty or could escape --root.
func checkName(field, name string) error {
	if name == "" {
		return status.Errorf(codes.InvalidArgument, "%s is required", field)
	}
	if !nameRE.MatchString(name) {
		return status.Errorf(codes.InvalidArgument, "%s %q: want 1-128 of [A-Za-z0-9._-], starting with a letter or digit", field, name)
	}
	return nil
}

// lockID checks an object's id, named field in its request, and takes the
// object's lock (kind/id).
func (s *store) lockID(field, kind, id string, shared bool) (release func(), err error) {
	if err := checkName(field, id); err != nil {
		return nil, err
	}
	return s.locks.lock(key(kind, id), shared)
}

// lockVolume takes the lock lockKind/id, as lockID, and reads the volume id.
func (s *store) lockVolume(field, lockKind, id string, shared bool) (m *volumeMeta, release func(), err error) {
	if release, err = s.lockID(field, lockKind, id, shared); err != nil {
		return nil, nil, err
	}
	if m, err = s.volume(id); err != nil {
		release()
		return nil, nil, err
	}
	return m, release, nil
}

// key is an object's lock key.
func key(kind, id string) string { return kind + "/" + id }

// store reads and writes the objects under root, and keeps the in-process
// locks that keep two operations off one object and the memory volumes'
// budget.
type store struct {
	root   string
	locks  keyLocks
	memory memoryBudget
}

func newStore(root string) (*store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{volumesDir, snapshotsDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o750); err != nil {
			return nil, err
		}
	}
	// The loop devices report their backing file by its real path.
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, err
	}
	return &store{root: abs, locks: keyLocks{m: map[string]*keyLock{}}, memory: memoryBudget{pending: map[string]int64{}}}, nil
}

func (s *store) dir(kind, id string) string  { return filepath.Join(s.root, kind, id) }
func (s *store) data(kind, id string) string { return filepath.Join(s.root, kind, id, dataName) }

func (s *store) nodeFile(volume, node string) string {
	return filepath.Join(s.dir(volumesDir, volume), "node-"+node+".json")
}

// load reads the record of kind/id into v; a missing object is NotFound.
func (s *store) load(kind, id string, v any) error {
	err := readJSON(filepath.Join(s.dir(kind, id), metaFile), v)
	if errors.Is(err, os.ErrNotExist) {
		return status.Errorf(codes.NotFound, "%s %s not found", strings.TrimSuffix(kind, "s"), id)
	}
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

func (s *store) volume(id string) (*volumeMeta, error) {
	var m volumeMeta
	return &m, s.load(volumesDir, id, &m)
}

func (s *store) snapshot(id string) (*snapshotMeta, error) {
	var m snapshotMeta
	return &m, s.load(snapshotsDir, id, &m)
}

// saveVolume rewrites a volume's record.
func (s *store) saveVolume(m *volumeMeta) error {
	return internal(writeJSON(filepath.Join(s.dir(volumesDir, m.ID), metaFile), m))
}

// create builds kind/id: fill writes its data at the path given, then the
// record is written and the object renamed into place.
func (s *store) create(kind, id string, meta any, fill func(data string) error) error {
	tmp := filepath.Join(s.root, kind, ".new-"+id)
	if err := removeTree(tmp); err != nil {
		return internal(err)
	}
	err := os.Mkdir(tmp, 0o750)
	if err == nil {
		err = fill(filepath.Join(tmp, dataName))
	}
	if err == nil {
		err = writeJSON(filepath.Join(tmp, metaFile), meta)
	}
	if err == nil {
		err = os.Rename(tmp, s.dir(kind, id))
	}
	if err != nil {
		_ = removeTree(tmp)
		return internal(err)
	}
	return nil
}

// remove deletes kind/id; a missing object is no error.
func (s *store) remove(kind, id string) error {
	gone := filepath.Join(s.root, kind, fmt.Sprintf(".del-%s-%d", id, time.Now().UnixNano()))
	if err := os.Rename(s.dir(kind, id), gone); err != nil && !errors.Is(err, os.ErrNotExist) {
		return internal(err)
	}
	return internal(removeTree(gone))
}

// ids lists the objects of kind, sorted.
func (s *store) ids(kind string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, kind))
	if err != nil {
		return nil, internal(err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// nodeState reads one node's publications of a volume.
func (s *store) nodeState(volume, node string) (*nodeState, error) {
	st := &nodeState{}
	err := readJSON(s.nodeFile(volume, node), st)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, internal(err)
	}
	if st.Publications == nil {
		st.Publications = map[string]publication{}
	}
	return st, nil
}

func (s *store) saveNodeState(volume, node string, st *nodeState) error {
	return internal(writeJSON(s.nodeFile(volume, node), st))
}

// published reports whether any node has a publication of the volume.
func (s *store) published(volume string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(s.dir(volumesDir, volume), "node-*.json"))
	if err != nil {
		return false, internal(err)
	}
	for _, f := range files {
		var st nodeState
		if err := readJSON(f, &st); err != nil {
			return false, internal(err)
		}
		if len(st.Publications) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// makeData creates an empty volume: a directory, or a sparse file of size
// bytes.
func makeData(path string, block bool, size int64) error {
	if !block {
		// A volume is any pod's to write, whatever its user.
		if err := os.Mkdir(path, 0o750); err != nil {
			return err
		}
		return os.Chmod(path, 0o777)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyData copies a volume's or snapshot's data (a directory tree or a
// sparse file) to dst, which must not exist, keeping owners, modes and holes.
func copyData(src, dst string) error {
	_, err := command("cp", "-a", "--sparse=always", src, dst)
	return err
}

// command runs a tool and returns its output, its error naming it.
func command(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// writeJSON writes v to path atomically: a temporary file, synced, renamed.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// internal turns an error that is not already a gRPC status into Internal.
func internal(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Internal, err.Error())
}

// keyLocks keeps two operations off one object: an operation takes its
// object's key, exclusively or shared (a snapshot or clone reading its
// source), without waiting. A key in use is Aborted, as CSI asks of an
// operation already pending for a volume; the sidecars retry.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	sync.RWMutex
	refs int
}

// lock takes key; release gives it back.
func (l *keyLocks) lock(key string, shared bool) (release func(), err error) {
	l.mu.Lock()
	k := l.m[key]
	if k == nil {
		k = &keyLock{}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	drop := func() {
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	ok, unlock := k.TryLock, k.Unlock
	if shared {
		ok, unlock = k.TryRLock, k.RUnlock
	}
	if !ok() {
		drop()
		return nil, status.Errorf(codes.Aborted, "an operation on %s is pending", key)
	}
	return func() { unlock(); drop() }, nil
}
