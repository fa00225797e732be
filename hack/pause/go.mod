// The local cluster's pod sandbox image (hack/cluster/up.sh); a separate module,
// so the project's ./..., vet and lint never see it.
module github.com/storagebench/storagebench/hack/pause

go 1.24.0
