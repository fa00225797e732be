// Command pause is the pod sandbox ("pause") image of the local test cluster
// (hack/cluster/up.sh): it holds the pod's namespaces and exits on SIGTERM or
// SIGINT. As the pod's PID 1 it also reaps zombies.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
