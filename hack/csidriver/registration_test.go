package main

import (
	"path/filepath"
	"slices"
	"testing"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// The kubelet's plugin watcher finds <driver>-reg.sock and learns the
// driver's name and endpoint from it.
func TestRegistration(t *testing.T) {
	reg := t.TempDir()
	start(t, options{registrationDir: reg, registrationPath: "/var/lib/kubelet/plugins/csi.storagebench.test/csi.sock"})
	conn := dial(t, filepath.Join(reg, "csi.storagebench.test-reg.sock"))
	c := registerapi.NewRegistrationClient(conn)
	info, err := c.GetInfo(bg, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registerapi.CSIPlugin || info.Name != "csi.storagebench.test" ||
		info.Endpoint != "/var/lib/kubelet/plugins/csi.storagebench.test/csi.sock" || !slices.Equal(info.SupportedVersions, []string{"1.0.0"}) {
		t.Errorf("GetInfo: %+v", info)
	}
	if _, err := c.NotifyRegistrationStatus(bg, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Error(err)
	}
}
