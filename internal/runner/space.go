package runner

// Free space. Consent to `files` on an existing claim lets the benchmark
// write files in a directory of its own, not fill the application's volume:
// before anything is laid out or preconditioned the runner checks that the
// files it is about to allocate fit in what the file system has free for an
// unprivileged user, and on an existing claim that a reserve stays free for
// the application after the layout. A Block volume must be at least as large
// as the ranges the clients' jobs touch. A layout that does not fit is a
// preparation error: the client reports it as its ready report's error and
// nothing is written.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/storagebench/storagebench/internal/fio"
	"github.com/storagebench/storagebench/internal/numfmt"
	"github.com/storagebench/storagebench/internal/protocol"
)

// AppReservePercent is the share of an existing claim's file system that
// must stay free after the layout: the operator's rule, checked here
// against the free space this runner sees (protocol.AppReservePercent).
const AppReservePercent = protocol.AppReservePercent

// spaceDemand is what a Filesystem layout allocates on one file system.
type spaceDemand struct {
	// bytesPerJob is each job file's size, jobs the job files per client.
	bytesPerJob, jobs int64
	// clients is how many clients lay out on this file system: the plan's
	// clients on a shared volume, else 1.
	clients int64
	// present is what those files already hold on the file system, each
	// counted up to bytesPerJob: what fio will not allocate again.
	present uint64
	// reserve keeps AppReservePercent of the file system free: an
	// existing claim, which holds an application's data.
	reserve bool
	// dir is where the files go, for the message.
	dir string
}

// fsSpace is a file system's size and what an unprivileged user may still
// allocate on it, in bytes.
type fsSpace struct{ avail, size uint64 }

// mulSat is a × b, saturated at the largest uint64.
func mulSat(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// total is the size of every job file of every client laying out here.
func (d spaceDemand) total() uint64 {
	return mulSat(mulSat(uint64(max(d.bytesPerJob, 0)), uint64(max(d.jobs, 0))), uint64(max(d.clients, 0)))
}

// need is what the layout will allocate: every file at its full size, less
// what they already hold.
func (d spaceDemand) need() uint64 {
	t := d.total()
	return t - min(d.present, t)
}

// reserveOf is what must stay free on a file system of size bytes:
// AppReservePercent of it, rounded up.
func reserveOf(size uint64) uint64 {
	q, r := size/100, size%100
	return q*AppReservePercent + (r*AppReservePercent+99)/100
}

// check refuses a layout that does not fit in s: the rule is
//
//	need ≤ avail − reserve
//
// where need = bytesPerJob × jobs × clients − present, avail is the bytes
// an unprivileged user may still allocate and reserve is AppReservePercent
// of the file system's size on an existing claim (else 0). A layout that
// allocates nothing always fits. A file system that reports no size (some
// FUSE and virtual file systems) cannot be judged: the benchmark's own
// volume is used anyway, an existing claim is refused.
func (d spaceDemand) check(s fsSpace) error {
	need := d.need()
	switch {
	case need == 0:
		return nil
	case s.size == 0 && !d.reserve:
		return nil
	case s.size == 0:
		return fmt.Errorf("the file system of %s reports no size, so the runner cannot check that the benchmark's files (%s) leave the application %d %% of it free: it writes nothing on this claim",
			d.dir, sizeText(need, true), AppReservePercent)
	}
	var reserve uint64
	if d.reserve {
		reserve = reserveOf(s.size)
	}
	if reserve <= s.avail && need <= s.avail-reserve {
		return nil
	}
	what := fmt.Sprintf("%s × %s", count(d.jobs, "job file"), sizeText(uint64(max(d.bytesPerJob, 0)), false))
	if d.clients > 1 {
		what = fmt.Sprintf("%d clients sharing the volume × %s", d.clients, what)
	}
	if d.present > 0 {
		what += fmt.Sprintf(", less %s already laid out", sizeText(min(d.present, d.total()), false))
	}
	msg := fmt.Sprintf("not enough free space for the benchmark's files in %s: they need %s more (%s), and %s is free",
		d.dir, sizeText(need, true), what, sizeText(s.avail, true))
	change := "lower workload.workingSetPerClient"
	if d.clients > 1 {
		change += " or clients.count"
	}
	if d.reserve {
		msg += fmt.Sprintf(", while %s, %d %% of the file system's %s, must stay free for the application",
			sizeText(reserve, true), AppReservePercent, sizeText(s.size, false))
		change += ", or free space on the claim"
	} else {
		change += ", or give the volume more space (storage.size)"
	}
	return errors.New(msg + ": " + change)
}

// count is n things, in the plural unless one.
func count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

// sizeText renders bytes in binary units, with the exact count when exact.
func sizeText(b uint64, exact bool) string {
	s := numfmt.Size(int64(min(b, math.MaxInt64)))
	if exact {
		s += " (" + strconv.FormatUint(b, 10) + " bytes)"
	}
	return s
}

// freeSpace is the space of the file system holding dir (statfs): avail is
// what an unprivileged user may still allocate (f_bavail, not f_bfree: the
// runner is not root, and the blocks reserved for root are not its to
// take), size the file system's size.
func freeSpace(dir string) (fsSpace, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsSpace{}, fmt.Errorf("free space of %s: %w", dir, err)
	}
	unit := blockUnit(&st)
	return fsSpace{avail: mulSat(st.Bavail, unit), size: mulSat(st.Blocks, unit)}, nil
}

// blockUnit is the unit statfs counts blocks in: the fragment size where the
// system reports one (Linux's f_frsize, which statvfs(3) and df use; FUSE
// file systems may set it below f_bsize), else the block size. Frsize
// exists only on some systems' Statfs_t, hence reflection.
func blockUnit(st *unix.Statfs_t) uint64 {
	if f := reflect.ValueOf(st).Elem().FieldByName("Frsize"); f.IsValid() && f.CanInt() && f.Int() > 0 {
		return uint64(f.Int())
	}
	return uint64(max(st.Bsize, 0))
}

// allocated is what a regular file holds on its file system, capped at
// limit; 0 for anything else or when missing. A link is not followed.
func allocated(path string, limit int64) uint64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return min(mulSat(uint64(max(st.Blocks, 0)), 512), uint64(max(limit, 0)))
}

// clientDirName is a shared volume's client directory name (directory).
var clientDirName = regexp.MustCompile(`^client-([0-9]{3,})$`)

// present is what the files the layout in dir will write already hold:
// this client's job files and, on a shared volume, those of the other
// clients that already created their directories next to dir. The others
// lay out at the same time: their files already allocated are no longer in
// the free space statfs reports, and must not be counted again, or a
// client starting late would refuse a layout that fits.
func (r *Runner) present(dir string, perJob int64) uint64 {
	p := r.Plan
	jobs := int64(p.Topology.JobsPerClient)
	sum := func(d string) uint64 {
		var s uint64
		for j := range jobs {
			s += allocated(filepath.Join(d, fio.JobFile(int(j))), perJob)
		}
		return s
	}
	total := sum(dir)
	if !p.Volume.Shared {
		return total
	}
	parent := filepath.Dir(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return total // nothing of the others counted: the check errs on the safe side
	}
	for _, e := range entries {
		m := clientDirName.FindStringSubmatch(e.Name())
		if m == nil || e.Type() != fs.ModeDir || filepath.Join(parent, e.Name()) == dir {
			continue
		}
		if i, err := strconv.Atoi(m[1]); err != nil || i >= int(p.Topology.Clients) {
			continue
		}
		total += sum(filepath.Join(parent, e.Name()))
	}
	return total
}

// checkSpace refuses a Filesystem layout in dir (the directory the client's
// job files go in, existing) that does not fit on its file system.
func (r *Runner) checkSpace(dir string, perJob int64) error {
	p := r.Plan
	d := spaceDemand{bytesPerJob: perJob, jobs: int64(p.Topology.JobsPerClient), clients: 1,
		reserve: p.Volume.Subdir != "", dir: dir}
	if p.Volume.Shared {
		d.clients = max(int64(p.Topology.Clients), 1)
	}
	// What is present first, then statfs: a file another client allocates
	// in between is then counted as needed, never twice as free.
	d.present = r.present(dir, perJob)
	statfs := r.statfs
	if statfs == nil {
		statfs = freeSpace
	}
	s, err := statfs(dir)
	if err != nil {
		return err
	}
	return d.check(s)
}

// deviceDemand is the part of a Block volume the clients' jobs touch: from
// offset 0, jobs × bytesPerJob for each client sharing the device (they get
// consecutive ranges, layout), else for this client alone.
type deviceDemand struct {
	bytesPerJob, jobs, clients int64
	device                     string
}

func (d deviceDemand) check(size uint64) error {
	need := spaceDemand{bytesPerJob: d.bytesPerJob, jobs: d.jobs, clients: d.clients}.total()
	if need <= size {
		return nil
	}
	what := fmt.Sprintf("%s × %s", count(d.jobs, "job"), sizeText(uint64(max(d.bytesPerJob, 0)), false))
	change := "lower workload.workingSetPerClient"
	if d.clients > 1 {
		what = fmt.Sprintf("%d clients sharing the device × %s", d.clients, what)
		change += " or clients.count"
	}
	return fmt.Errorf("block device %s holds %s, less than the %s the benchmark's jobs touch (%s from offset 0): %s, or use a larger volume",
		d.device, sizeText(size, true), sizeText(need, true), what, change)
}

// deviceSize is the size of the block device at path: where a seek to its
// end lands. It opens the device to read only and reads nothing.
func deviceSize(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // opened to read: nothing to flush
	n, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", path, err)
	}
	return uint64(max(n, 0)), nil
}

// checkDevice refuses a Block layout whose jobs' ranges end past the
// device's end.
func (r *Runner) checkDevice(perJob int64) error {
	p := r.Plan
	d := deviceDemand{bytesPerJob: perJob, jobs: int64(p.Topology.JobsPerClient), clients: 1, device: p.Volume.Path}
	if p.Volume.Shared {
		d.clients = max(int64(p.Topology.Clients), 1)
	}
	size, err := deviceSize(p.Volume.Path)
	if err != nil {
		return err
	}
	return d.check(size)
}
