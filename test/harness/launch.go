package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// mountScript runs as root in the pod's private mount namespace: it binds
// each (kind, source, target, ro|rw) quadruple up to "--", then changes to the
// working directory and execs the command. Targets missing inside an earlier
// mount are created there.
const mountScript = `set -e
while [ "$1" != -- ]; do
	if [ "$1" = file ]; then
		[ -e "$3" ] || { mkdir -p "$(dirname "$3")"; : >"$3"; }
	else
		mkdir -p "$3"
	fi
	mount --bind "$2" "$3"
	if [ "$4" = ro ]; then mount -o remount,bind,ro "$3"; fi
	shift 4
done
cd "$2"
shift 2
exec "$@"`

// prepare makes the pod's volumes and returns its process, not started, and
// the pod's log, where its stdout and stderr go (to close once started).
func (k *Kubelet) prepare(ctx context.Context, pod *corev1.Pod, r *podRun) (*exec.Cmd, *os.File, error) {
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.InitContainers) != 0 {
		return nil, nil, &waitingError{"CreateContainerConfigError", "the harness kubelet runs pods of exactly one container and no init containers"}
	}
	c := &pod.Spec.Containers[0]
	env, vars, err := k.containerEnv(ctx, pod, c, r)
	if err != nil {
		return nil, nil, &waitingError{"CreateContainerConfigError", err.Error()}
	}
	argv, err := k.commandLine(c, vars)
	if err != nil {
		return nil, nil, &waitingError{"CreateContainerError", err.Error()}
	}
	binds, err := k.prepareVolumes(ctx, pod, c, r)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"--mount", "--propagation", "private", "--", "/bin/sh", "-c", mountScript, "harness-pod"}
	for _, b := range binds {
		if err := k.mounts.ensure(b.target, b.file); err != nil {
			return nil, nil, fmt.Errorf("creating mount point %s: %w", b.target, err)
		}
		kind, mode := "dir", "rw"
		if b.file {
			kind = "file"
		}
		if b.readOnly {
			mode = "ro"
		}
		args = append(args, kind, b.source, b.target, mode)
	}
	workingDir := c.WorkingDir
	if workingDir == "" {
		workingDir = "/"
	}
	args = append(args, "--", workingDir)
	args = append(args, argv...)
	log, err := os.OpenFile(r.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(k.unshare, args...)
	env = append(env, k.extraEnv(pod)...)
	cmd.Env, cmd.Dir = env, "/"
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r.mu.Lock()
	r.imageID, r.command = "harness://"+argv[0], argv
	r.mu.Unlock()
	return cmd, log, nil
}

// commandLine is the container's command and args with $(VAR) expanded and
// the executable mapped to a host binary (see KubeletOptions.Executables).
func (k *Kubelet) commandLine(c *corev1.Container, vars map[string]string) ([]string, error) {
	var argv []string
	for _, s := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, expandVars(s, vars))
	}
	if len(c.Command) == 0 {
		exe, ok := k.opts.Executables[c.Image]
		if !ok {
			return nil, fmt.Errorf("container %q has no command and its image %q is not in the harness's Executables", c.Name, c.Image)
		}
		return append([]string{exe}, argv...), nil
	}
	if exe, ok := k.opts.Executables[argv[0]]; ok {
		argv[0] = exe
	} else if !filepath.IsAbs(argv[0]) {
		exe, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, err
		}
		argv[0] = exe
	}
	if _, err := os.Stat(argv[0]); err != nil {
		return nil, fmt.Errorf("executable for container %q: %w", c.Name, err)
	}
	return argv, nil
}
