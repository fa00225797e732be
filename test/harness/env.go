package harness

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// containerEnv resolves the container's environment as the kubelet does:
// the kubernetes Service's variables (naming the real API server), envFrom,
// then env with $(VAR) expanded, plus PATH, HOSTNAME and HOME (a per-pod
// directory) unless set. It returns the list and the variables by name.
func (k *Kubelet) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, r *podRun) ([]string, map[string]string, error) {
	vars := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, ok := vars[name]; !ok {
			order = append(order, name)
		}
		vars[name] = value
	}
	hostPort := net.JoinHostPort(k.apiHost, k.apiPort)
	set("KUBERNETES_SERVICE_HOST", k.apiHost)
	set("KUBERNETES_SERVICE_PORT", k.apiPort)
	set("KUBERNETES_SERVICE_PORT_HTTPS", k.apiPort)
	set("KUBERNETES_PORT", "tcp://"+hostPort)
	for _, from := range c.EnvFrom {
		data, err := k.envSource(ctx, pod.Namespace, from)
		if err != nil {
			return nil, nil, err
		}
		keys := make([]string, 0, len(data))
		for key := range data {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			set(from.Prefix+key, data[key])
		}
	}
	for _, e := range c.Env {
		value, err := k.envValue(ctx, pod, e, vars)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, value)
	}
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	home := filepath.Join(r.dir, "home")
	for _, d := range [][2]string{{"PATH", defaultPath}, {"HOSTNAME", hostname}, {"HOME", home}} {
		if _, ok := vars[d[0]]; !ok {
			set(d[0], d[1])
		}
	}
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+vars[name])
	}
	return env, vars, nil
}

func (k *Kubelet) envValue(ctx context.Context, pod *corev1.Pod, e corev1.EnvVar, vars map[string]string) (string, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return expandVars(e.Value, vars), nil
	case from.FieldRef != nil:
		return fieldValue(pod, from.FieldRef.FieldPath)
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		data, err := k.configMapData(ctx, pod.Namespace, ref.Name)
		return keyOf(data, err, "configmap", ref.Name, ref.Key, ref.Optional)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		data, err := k.secretData(ctx, pod.Namespace, ref.Name)
		return keyOf(data, err, "secret", ref.Name, ref.Key, ref.Optional)
	}
	return "", fmt.Errorf("unsupported valueFrom (the harness kubelet resolves fieldRef, configMapKeyRef and secretKeyRef)")
}

func keyOf(data map[string]string, err error, kind, name, key string, optional *bool) (string, error) {
	opt := optional != nil && *optional
	if apierrors.IsNotFound(err) && opt {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	v, ok := data[key]
	if !ok && !opt {
		return "", fmt.Errorf("couldn't find key %s in %s %s", key, kind, name)
	}
	return v, nil
}

func (k *Kubelet) envSource(ctx context.Context, namespace string, from corev1.EnvFromSource) (map[string]string, error) {
	var data map[string]string
	var err error
	var optional *bool
	switch {
	case from.ConfigMapRef != nil:
		data, err = k.configMapData(ctx, namespace, from.ConfigMapRef.Name)
		optional = from.ConfigMapRef.Optional
	case from.SecretRef != nil:
		data, err = k.secretData(ctx, namespace, from.SecretRef.Name)
		optional = from.SecretRef.Optional
	}
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil, nil
	}
	return data, err
}

func (k *Kubelet) configMapData(ctx context.Context, namespace, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	if err := k.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, err
	}
	data := map[string]string{}
	for key, v := range cm.BinaryData {
		data[key] = string(v)
	}
	for key, v := range cm.Data {
		data[key] = v
	}
	return data, nil
}

func (k *Kubelet) secretData(ctx context.Context, namespace, name string) (map[string]string, error) {
	s := &corev1.Secret{}
	if err := k.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		return nil, err
	}
	data := map[string]string{}
	for key, v := range s.Data {
		data[key] = string(v)
	}
	return data, nil
}

// fieldValue resolves a downward-API field path.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return podIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok && strings.HasSuffix(key, "']") {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// formatMap renders labels or annotations as a downwardAPI file does.
func formatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for key, v := range m {
		lines = append(lines, fmt.Sprintf("%s=%q", key, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// expandVars expands $(NAME) references to defined variables; $$ is a
// literal $, and references to undefined variables stay as they are.
func expandVars(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
