// Package images checks the container images that hack/images.sh builds from
// Dockerfile and Dockerfile.runner: the docker-archive tarballs carry the
// names a node imports, the image configs run the right entrypoint as user
// 65532, and the unpacked images really work: the runner image runs the
// runner and fio as user 65532 on a read-only root with only
// /storagebench/work writable, as a client pod does, and the manager image's
// static binary starts. Needs root (hack/images.sh builds with buildah and
// debootstrap; the checks chroot into the unpacked images). The first run
// builds for several minutes; later runs find the images in the cache.
package images

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The user every image runs as.
const nonRoot = "65532:65532"

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// images runs hack/images.sh once per test binary and returns the directory
// holding manager.tar, runner.tar and build.txt.
func images(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if os.Geteuid() != 0 {
			buildErr = errors.New("hack/images.sh and this test need root (buildah, debootstrap, chroot): run them as root, like make test")
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "./hack/images.sh")
		cmd.Dir = repoRoot()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("hack/images.sh failed (%w):\n%s", err, stderr.String())
			return
		}
		buildDir = strings.TrimSpace(stdout.String())
		t.Logf("hack/images.sh: %s in %s\n%s", buildDir, time.Since(start).Round(time.Second), stderr.String())
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}

// need fails the test when a tool hack/images.sh should have installed is
// missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: hack/images.sh installs it (Debian package %s); run hack/images.sh as root", tool, tool)
		}
	}
}

type archiveManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// imageConfig is the part of an OCI/Docker image config the checks read.
type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string   `json:"User"`
		Entrypoint []string `json:"Entrypoint"`
		Cmd        []string `json:"Cmd"`
		Env        []string `json:"Env"`
		WorkingDir string   `json:"WorkingDir"`
	} `json:"config"`
}

// archiveMembers reads a tarball's member names and manifest.json.
func archiveMembers(t *testing.T, file string) (names []string, manifest []archiveManifest) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		names = append(names, h.Name)
		if h.Name == "manifest.json" {
			if err := json.NewDecoder(tr).Decode(&manifest); err != nil {
				t.Fatalf("%s: manifest.json: %v", file, err)
			}
		}
	}
	return names, manifest
}

// TestArchives: both tarballs are docker archives naming the image
// localhost/storagebench-NAME with the build's tag and :dev, the form
// `ctr -n k8s.io images import` and `docker load` take.
func TestArchives(t *testing.T) {
	dir := images(t)
	tag := filepath.Base(dir)
	if !regexp.MustCompile(`^dev-[0-9a-f]{12}$`).MatchString(tag) {
		t.Errorf("tag %q is not dev-<12 hex digits of the inputs' hash>", tag)
	}
	build, err := os.ReadFile(filepath.Join(dir, "build.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build.txt:\n%s", build)
	for _, name := range []string{"manager", "runner"} {
		file := filepath.Join(dir, name+".tar")
		members, manifest := archiveMembers(t, file)
		if len(manifest) != 1 {
			t.Fatalf("%s: manifest.json has %d images, want 1", file, len(manifest))
		}
		m := manifest[0]
		image := "localhost/storagebench-" + name
		if want := []string{image + ":" + tag, image + ":dev"}; !slices.Equal(m.RepoTags, want) {
			t.Errorf("%s: RepoTags %q, want %q", file, m.RepoTags, want)
		}
		for _, member := range append([]string{m.Config}, m.Layers...) {
			if !slices.Contains(members, member) {
				t.Errorf("%s: manifest.json names %s, which the archive lacks", file, member)
			}
		}
		if len(m.Layers) == 0 {
			t.Errorf("%s: no layers", file)
		}
		if !strings.Contains(string(build), name+"="+image+":"+tag) {
			t.Errorf("build.txt does not name %s:%s", image, tag)
		}
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s, %.1f MB, %d layers", file, m.RepoTags, float64(fi.Size())/1e6, len(m.Layers))
	}
}

// inspect reads an archive's image config with skopeo.
func inspect(t *testing.T, file string) imageConfig {
	t.Helper()
	need(t, "skopeo")
	out, err := exec.Command("skopeo", "inspect", "--config", "docker-archive:"+file).Output()
	if err != nil {
		t.Fatalf("skopeo inspect --config docker-archive:%s: %v", file, stderrOf(err))
	}
	var c imageConfig
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("skopeo inspect --config: %v\n%s", err, out)
	}
	if c.OS != "linux" || c.Architecture != runtime.GOARCH {
		t.Errorf("%s: platform %s/%s, want linux/%s", file, c.OS, c.Architecture, runtime.GOARCH)
	}
	if c.Config.User != nonRoot {
		t.Errorf("%s: User %q, want %q", file, c.Config.User, nonRoot)
	}
	return c
}

// unpack unpacks an archive's image with skopeo and umoci and returns its
// root file system.
func unpack(t *testing.T, file string) string {
	t.Helper()
	need(t, "skopeo", "umoci", "unshare", "chroot")
	tmp := t.TempDir()
	layout := filepath.Join(tmp, "oci")
	run(t, "skopeo", "copy", "-q", "docker-archive:"+file, "oci:"+layout+":image")
	bundle := filepath.Join(tmp, "bundle")
	run(t, "umoci", "unpack", "--image", layout+":image", bundle)
	return filepath.Join(bundle, "rootfs")
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func stderrOf(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, ee.Stderr)
	}
	return err
}

// podScript runs "$@" chrooted into the root file system $1 the way a client
// pod runs it: in mount and PID namespaces of its own, the root read-only,
// /proc and /dev mounted, a tmpfs (the emptyDir) at /storagebench/work, as
// user 65532 with the image's environment.
const podScript = `set -eu
r=$1 env=$2
shift 2
mount --bind "$r" "$r"
mount -o remount,bind,ro "$r"
[ ! -d "$r/proc" ] || mount -t proc proc "$r/proc"
[ ! -d "$r/dev" ] || mount --rbind /dev "$r/dev"
[ ! -d "$r/storagebench/work" ] || mount -t tmpfs -o mode=0777 tmpfs "$r/storagebench/work"
chroot=$(command -v chroot)
exec env -i $env "$chroot" --userspec=` + nonRoot + ` "$r" "$@"
`

// inPod runs a command in an unpacked image as podScript does and returns
// its exit code, stdout and stderr.
func inPod(t *testing.T, rootfs string, env []string, timeout time.Duration, command ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"--mount", "--pid", "--fork", "--kill-child", "sh", "-c", podScript, "pod", rootfs, strings.Join(env, " ")}, command...)
	cmd := exec.CommandContext(ctx, "unshare", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%s: %v", strings.Join(command, " "), err)
	}
	return code, out.String(), errb.String()
}

func TestRunnerImage(t *testing.T) {
	file := filepath.Join(images(t), "runner.tar")
	c := inspect(t, file)
	if want := []string{"/usr/local/bin/runner"}; !slices.Equal(c.Config.Entrypoint, want) || len(c.Config.Cmd) != 0 {
		t.Errorf("Entrypoint %q Cmd %q, want %q and no Cmd", c.Config.Entrypoint, c.Config.Cmd, want)
	}
	for _, env := range c.Config.Env {
		if strings.ContainsAny(env, " \t\n'\"$") {
			t.Fatalf("environment %q: podScript passes the environment unquoted", env)
		}
	}
	rootfs := unpack(t, file)
	staticBinary(t, filepath.Join(rootfs, "usr/local/bin/runner"))

	// What keeps the image small: no apt lists, no documentation.
	for _, dir := range []string{"var/lib/apt/lists", "usr/share/man", "usr/share/locale"} {
		entries, _ := os.ReadDir(filepath.Join(rootfs, dir))
		for _, e := range entries {
			if e.Name() != "partial" && e.Name() != "lock" && e.Name() != "auxfiles" {
				t.Errorf("/%s is not empty: %s", dir, e.Name())
				break
			}
		}
	}

	// No arguments: the usage and exit code 2.
	code, _, stderr := inPod(t, rootfs, c.Config.Env, time.Minute, "/usr/local/bin/runner")
	if code != 2 || !strings.Contains(stderr, "usage: runner") {
		t.Errorf("runner without arguments: exit code %d, stderr %q; want 2 and the usage", code, stderr)
	}

	code, stdout, stderr := inPod(t, rootfs, c.Config.Env, time.Minute, "fio", "--version")
	if code != 0 || !strings.HasPrefix(stdout, "fio-3.") {
		t.Errorf("fio --version: exit code %d, stdout %q, stderr %q; want fio-3.x", code, stdout, stderr)
	}
	t.Logf("fio --version: %s", strings.TrimSpace(stdout))

	// A real benchmark as user 65532 on the read-only root: the runner lays
	// out its files in /storagebench/work, drives fio for one step and
	// prints the curve.
	code, stdout, stderr = inPod(t, rootfs, c.Config.Env, 2*time.Minute, "/usr/local/bin/runner", "local",
		"--clients", "1", "--jobs", "1", "--profile", "oltp", "--working-set", "8Mi", "--precondition=false",
		"--rates", "200", "--step-duration", "5s", "--ramp", "0s", "--dir", "/storagebench/work/local")
	if code != 0 {
		t.Fatalf("runner local in the image as %s: exit code %d\nstdout:\n%s\nstderr:\n%s", nonRoot, code, stdout, stderr)
	}
	t.Logf("runner local in the image as %s:\n%s", nonRoot, stdout)
	if !strings.Contains(stdout, "ended: all 1 steps completed") {
		t.Errorf("runner local did not complete its step:\n%s", stdout)
	}

	// Nothing but the emptyDir was writable.
	code, _, stderr = inPod(t, rootfs, c.Config.Env, time.Minute, "/usr/bin/touch", "/tmp/x")
	if code == 0 || !strings.Contains(stderr, "Read-only file system") {
		t.Errorf("touch /tmp/x: exit code %d, stderr %q; want a read-only root", code, stderr)
	}
}

func TestManagerImage(t *testing.T) {
	file := filepath.Join(images(t), "manager.tar")
	c := inspect(t, file)
	if want := []string{"/manager"}; !slices.Equal(c.Config.Entrypoint, want) || len(c.Config.Cmd) != 0 {
		t.Errorf("Entrypoint %q Cmd %q, want %q and no Cmd", c.Config.Entrypoint, c.Config.Cmd, want)
	}
	rootfs := unpack(t, file)
	staticBinary(t, filepath.Join(rootfs, "manager"))

	// A minimal image: the binary and the user's passwd and group entries.
	var files []string
	err := filepath.Walk(rootfs, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			rel, _ := filepath.Rel(rootfs, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"etc/group", "etc/passwd", "manager"}; !slices.Equal(files, want) {
		t.Errorf("files in the manager image: %q, want %q", files, want)
	}

	code, stdout, stderr := inPod(t, rootfs, nil, time.Minute, "/manager", "--help")
	if code != 0 || !strings.Contains(stderr+stdout, "-runner-image") {
		t.Errorf("/manager --help as %s: exit code %d, output %q; want 0 and the flags", nonRoot, code, stderr+stdout)
	}
}

// staticBinary fails unless file is an ELF executable without a program
// interpreter, as a binary for an image without libc must be.
func staticBinary(t *testing.T, file string) {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked", file)
		}
	}
}
