package main

import (
	"context"
	"log"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// registrar answers the kubelet's plugin watcher on <registration-dir>/
// <driver-name>-reg.sock, as node-driver-registrar would: the kubelet finds
// the socket, asks GetInfo, connects to the CSI endpoint and reports back.
type registrar struct {
	name, endpoint string
}

func (r *registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              r.name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if st.PluginRegistered {
		log.Printf("csidriver: registered with the kubelet as %s", r.name)
	} else {
		log.Printf("csidriver: the kubelet refused the registration: %s", st.Error)
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}
