// Package asroot lets a test that must be root (it mounts file systems)
// run as any user: it runs again, alone, as root of a user and mount
// namespace of its own (unshare(1), unprivileged user namespaces), so
// `make unit` needs no root.
package asroot

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Rerun runs the calling test again as root of a new user and mount
// namespace when the test process is not root, and reports whether it did:
// the caller then returns, its verdict given. As root it returns false and
// the caller goes on. The test fails when it fails in the namespace, or
// did not pass there; it is skipped, saying why, where this kernel or
// sandbox does not let an unprivileged user make the namespace (unshare
// refused), or when it skipped there.
func Rerun(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return false
	}
	if out, err := exec.Command("unshare", "--user", "--map-root-user", "--mount", "true").CombinedOutput(); err != nil {
		t.Skipf("%s must be root, and this system lets no unprivileged user namespace be made (unshare: %v %s): run it as root (make test does)",
			t.Name(), err, strings.TrimSpace(string(out)))
	}
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", os.Args[0],
		"-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("%s in a user and mount namespace of its own: %v\n%s", t.Name(), err, out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Skipf("%s skipped in a user and mount namespace of its own:\n%s", t.Name(), out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Fatalf("%s in a user and mount namespace of its own did not pass there:\n%s", t.Name(), out)
	}
	return true
}
