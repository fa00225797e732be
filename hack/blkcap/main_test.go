package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCapOf(t *testing.T) {
	dev := func(p string) (string, error) {
		if p == "/dev/loop7" {
			return "7:7", nil
		}
		return "", errors.New("not a block device")
	}
	pv := func(ann map[string]string, local bool, path string) *corev1.PersistentVolume {
		v := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Annotations: ann}}
		if local {
			v.Spec.Local = &corev1.LocalVolumeSource{Path: path}
		}
		return v
	}
	for _, tc := range []struct {
		name    string
		pv      *corev1.PersistentVolume
		want    *Cap
		wantErr string
	}{
		{"no annotations", pv(nil, true, "/dev/loop7"), nil, ""},
		{"iops", pv(map[string]string{AnnotationMaxIOPS: "1500"}, true, "/dev/loop7"), &Cap{Device: "7:7", MaxIOPS: 1500}, ""},
		{"both", pv(map[string]string{AnnotationMaxIOPS: "10", AnnotationMaxBytes: "8388608"}, true, "/dev/loop7"),
			&Cap{Device: "7:7", MaxIOPS: 10, MaxBytesPerSecond: 8388608}, ""},
		{"zero", pv(map[string]string{AnnotationMaxIOPS: "0"}, true, "/dev/loop7"), nil, "not a positive integer"},
		{"garbage", pv(map[string]string{AnnotationMaxBytes: "8Mi"}, true, "/dev/loop7"), nil, "not a positive integer"},
		{"not local", pv(map[string]string{AnnotationMaxIOPS: "5"}, false, ""), nil, "not a local volume"},
		{"not a device", pv(map[string]string{AnnotationMaxIOPS: "5"}, true, "/srv/dir"), nil, "not a block device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CapOf(tc.pv, dev)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("cap %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A cgroup tree as the kubelet's cgroupfs driver lays it out, with plain
// files standing in for the throttle files.
func TestContainerCgroupsAndWriteOnce(t *testing.T) {
	root := t.TempDir()
	files := []string{"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
		"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"}
	mk := func(dir string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk(filepath.Join(root, "kubepods", "burstable", "podabc", "sandbox"))
	mk(filepath.Join(root, "kubepods", "burstable", "podabc", "runner"))
	mk(filepath.Join(root, "kubepods", "besteffort", "podother", "x"))

	dirs := ContainerCgroups(root, "abc")
	if len(dirs) != 2 {
		t.Fatalf("container cgroups %v, want the 2 of pod abc", dirs)
	}
	c := Cap{Device: "7:3", MaxIOPS: 1500}
	for _, d := range dirs {
		wrote, err := WriteCap(d, c)
		if err != nil || !wrote {
			t.Fatalf("first write to %s: wrote %v, %v", d, wrote, err)
		}
		b, _ := os.ReadFile(filepath.Join(d, "blkio.throttle.read_iops_device"))
		if string(b) != "7:3 1500" {
			t.Fatalf("read_iops_device holds %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(d, "blkio.throttle.read_bps_device")); len(b) != 0 {
			t.Fatalf("an unset bytes cap was written: %q", b)
		}
		if wrote, err := WriteCap(d, c); err != nil || wrote {
			t.Fatalf("second write to %s: wrote %v, %v; a held cap must not be written again", d, wrote, err)
		}
	}
	if got := ContainerCgroups(root, "none"); len(got) != 0 {
		t.Fatalf("cgroups of an unknown pod: %v", got)
	}
}
