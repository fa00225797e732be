package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storagebench/storagebench/internal/protocol"
)

// MountOf finds the mount holding path in a /proc/mounts listing: the entry
// with the longest mount point that is path or one of its parents (the last
// such entry wins, as later mounts hide earlier ones).
func MountOf(procMounts, path string) (protocol.Mount, bool) {
	path = filepath.Clean(path)
	var best protocol.Mount
	bestLen := -1
	for _, line := range strings.Split(procMounts, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		point := unescapeMount(f[1])
		if !within(path, point) || len(point) < bestLen {
			continue
		}
		best, bestLen = protocol.Mount{Source: unescapeMount(f[0]), FSType: f[2], Options: f[3]}, len(point)
	}
	return best, bestLen >= 0
}

func within(path, point string) bool {
	return point == "/" || path == point || strings.HasPrefix(path, point+"/")
}

// unescapeMount undoes /proc/mounts' octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// volumeMount reads this process' mounts for the volume's path; nil when
// they cannot be read (the benchmark does not depend on it).
func volumeMount(path string) *protocol.Mount {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	m, ok := MountOf(string(data), path)
	if !ok {
		return nil
	}
	return &m
}
