package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// bindMount is a host path bound at a path of the pod's mount namespace.
type bindMount struct {
	source, target string
	file           bool // a device or a file, not a directory
	readOnly       bool
}

// hostVolume is where a pod volume lives on the host.
type hostVolume struct {
	path  string
	block bool
}

// prepareVolumes makes the pod's volumes on the host and returns the bind
// mounts of the container, parents before children.
func (k *Kubelet) prepareVolumes(ctx context.Context, pod *corev1.Pod, c *corev1.Container, r *podRun) ([]bindMount, error) {
	if err := os.MkdirAll(filepath.Join(r.dir, "home"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(r.terminationPath(), nil, 0o666); err != nil {
		return nil, err
	}
	volumes := map[string]hostVolume{}
	for _, v := range pod.Spec.Volumes {
		hv, err := k.prepareVolume(ctx, pod, v, filepath.Join(r.dir, "volumes", v.Name))
		if err != nil {
			return nil, &waitingError{"ContainerCreating", fmt.Sprintf("MountVolume.SetUp failed for volume %q: %v", v.Name, err)}
		}
		volumes[v.Name] = hv
	}
	var binds []bindMount
	for _, m := range c.VolumeMounts {
		hv, ok := volumes[m.Name]
		if !ok || hv.block {
			return nil, &waitingError{"CreateContainerConfigError", fmt.Sprintf("volumeMount %q: no such filesystem volume", m.Name)}
		}
		source := hv.path
		if m.SubPath != "" {
			source = filepath.Join(hv.path, m.SubPath)
			if err := os.MkdirAll(source, 0o777); err != nil {
				return nil, err
			}
		}
		binds = append(binds, bindMount{source: source, target: m.MountPath, readOnly: m.ReadOnly})
	}
	for _, d := range c.VolumeDevices {
		hv, ok := volumes[d.Name]
		if !ok || !hv.block {
			return nil, &waitingError{"CreateContainerConfigError", fmt.Sprintf("volumeDevice %q: no such block volume", d.Name)}
		}
		binds = append(binds, bindMount{source: hv.path, target: d.DevicePath, file: true})
	}
	msgPath := c.TerminationMessagePath
	if msgPath == "" {
		msgPath = corev1.TerminationMessagePathDefault
	}
	binds = append(binds, bindMount{source: r.terminationPath(), target: msgPath, file: true})
	sort.SliceStable(binds, func(i, j int) bool { return binds[i].target < binds[j].target })
	return binds, nil
}

// prepareVolume returns a volume's host path, creating it under dir when the
// pod owns it.
func (k *Kubelet) prepareVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, dir string) (hostVolume, error) {
	var sources []corev1.VolumeProjection
	var mode *int32
	switch {
	case v.PersistentVolumeClaim != nil:
		return k.claimVolume(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
	case v.HostPath != nil:
		return hostVolume{path: v.HostPath.Path}, nil
	case v.EmptyDir != nil:
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return hostVolume{}, err
		}
		return hostVolume{path: dir}, os.Chmod(dir, 0o777)
	case v.Projected != nil:
		sources, mode = v.Projected.Sources, v.Projected.DefaultMode
	case v.ConfigMap != nil:
		cm := v.ConfigMap
		sources = []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cm.LocalObjectReference, Items: cm.Items, Optional: cm.Optional}}}
		mode = cm.DefaultMode
	case v.Secret != nil:
		s := v.Secret
		sources = []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: s.SecretName}, Items: s.Items, Optional: s.Optional}}}
		mode = s.DefaultMode
	case v.DownwardAPI != nil:
		sources = []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{Items: v.DownwardAPI.Items}}}
		mode = v.DownwardAPI.DefaultMode
	default:
		return hostVolume{}, errors.New("unsupported volume type (the harness kubelet supports persistentVolumeClaim, hostPath, emptyDir, projected, configMap, secret, downwardAPI)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return hostVolume{}, err
	}
	return hostVolume{path: dir}, k.project(ctx, pod, dir, sources, mode)
}

// claimVolume is the host path of a bound claim's PersistentVolume.
func (k *Kubelet) claimVolume(ctx context.Context, namespace, name string) (hostVolume, error) {
	claim := &corev1.PersistentVolumeClaim{}
	if err := k.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, claim); err != nil {
		return hostVolume{}, err
	}
	if claim.Status.Phase != corev1.ClaimBound {
		return hostVolume{}, fmt.Errorf("persistentvolumeclaim %q is not bound", name)
	}
	pv := &corev1.PersistentVolume{}
	if err := k.reader.Get(ctx, types.NamespacedName{Name: claim.Spec.VolumeName}, pv); err != nil {
		return hostVolume{}, err
	}
	path, err := pvHostPath(pv)
	block := pv.Spec.VolumeMode != nil && *pv.Spec.VolumeMode == corev1.PersistentVolumeBlock
	return hostVolume{path: path, block: block}, err
}

// project writes a projected volume's files into dir.
func (k *Kubelet) project(ctx context.Context, pod *corev1.Pod, dir string, sources []corev1.VolumeProjection, defaultMode *int32) error {
	files := map[string]string{}
	modes := map[string]*int32{}
	addItems := func(data map[string]string, items []corev1.KeyToPath, kind, name string) error {
		if len(items) == 0 {
			for key, v := range data {
				files[key] = v
			}
			return nil
		}
		for _, it := range items {
			v, ok := data[it.Key]
			if !ok {
				return fmt.Errorf("%s %q has no key %q", kind, name, it.Key)
			}
			files[it.Path], modes[it.Path] = v, it.Mode
		}
		return nil
	}
	for _, s := range sources {
		var err error
		switch {
		case s.ServiceAccountToken != nil:
			files[s.ServiceAccountToken.Path], err = k.token(ctx, pod, s.ServiceAccountToken)
		case s.ConfigMap != nil:
			var data map[string]string
			data, err = k.configMapData(ctx, pod.Namespace, s.ConfigMap.Name)
			if apierrors.IsNotFound(err) && s.ConfigMap.Optional != nil && *s.ConfigMap.Optional {
				continue
			}
			if err == nil {
				err = addItems(data, s.ConfigMap.Items, "configmap", s.ConfigMap.Name)
			}
		case s.Secret != nil:
			var data map[string]string
			data, err = k.secretData(ctx, pod.Namespace, s.Secret.Name)
			if apierrors.IsNotFound(err) && s.Secret.Optional != nil && *s.Secret.Optional {
				continue
			}
			if err == nil {
				err = addItems(data, s.Secret.Items, "secret", s.Secret.Name)
			}
		case s.DownwardAPI != nil:
			for _, it := range s.DownwardAPI.Items {
				if it.FieldRef == nil {
					return fmt.Errorf("downwardAPI %s: only fieldRef is supported", it.Path)
				}
				if files[it.Path], err = fieldValue(pod, it.FieldRef.FieldPath); err != nil {
					return err
				}
				modes[it.Path] = it.Mode
			}
		default:
			err = errors.New("unsupported projection (the harness kubelet supports serviceAccountToken, configMap, secret, downwardAPI)")
		}
		if err != nil {
			return err
		}
	}
	for path, content := range files {
		mode := int32(0o644)
		if m := modes[path]; m != nil {
			mode = *m
		} else if defaultMode != nil {
			mode = *defaultMode
		}
		full := filepath.Join(dir, path)
		if !strings.HasPrefix(full, dir+string(filepath.Separator)) {
			return fmt.Errorf("projected path %q leaves the volume", path)
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(content), os.FileMode(mode)); err != nil {
			return err
		}
		if err := os.Chmod(full, os.FileMode(mode)); err != nil {
			return err
		}
	}
	return nil
}

// token requests a ServiceAccount token bound to the pod, as the kubelet
// does for a serviceAccountToken projection.
func (k *Kubelet) token(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error) {
	name := pod.Spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: p.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	if err := k.client.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("requesting a token for serviceaccount %s/%s: %w", pod.Namespace, name, err)
	}
	return req.Status.Token, nil
}
