package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/storagebench/storagebench/test/promtest"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Prometheus' identity in the cluster: a ServiceAccount bound to the
// chart's metrics-reader ClusterRole, as a user binds their Prometheus.
const (
	monitoringNS = "e2e-monitoring"
	promSA       = "prometheus"
)

// prometheus is Debian's Prometheus server, run by the suite on loopback.
// It scrapes the chart's metrics Service over HTTPS with a ServiceAccount
// token, and evaluates the rules the chart installs as a PrometheusRule
// (rendered by helm), with a 1 s evaluation interval so alerts fire
// quickly. Debian builds Prometheus without Kubernetes service discovery,
// so the target is the Service's cluster IP, which kube-proxy routes to
// whichever manager pod is current (as a ServiceMonitor's endpoints would).
type prometheus struct {
	*promtest.Server
	api promv1.API
}

func startPrometheus() *prometheus {
	GinkgoHelper()
	ctx := context.Background()
	token := serviceAccountToken(monitoringNS, promSA, true)

	dir := filepath.Join(root, "_work", "e2e", "prometheus")
	Expect(os.RemoveAll(dir)).To(Succeed())
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "rules.yaml"), chartRules(), 0o644)).To(Succeed())
	harvest, err := os.ReadFile(filepath.Join(clusterDir(), "block", "harvest.addr"))
	Expect(err).NotTo(HaveOccurred(), "hack/blkcap writes the address of the capped volumes' Harvest series there")
	config := fmt.Sprintf(`global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 1s
rule_files: [rules.yaml]
scrape_configs:
- job_name: storagebench
  scheme: https
  tls_config: {insecure_skip_verify: true}
  authorization: {credentials_file: token}
  static_configs:
  - targets: [%q]
    labels: {service: %s}
- job_name: harvest
  scrape_interval: %s
  scrape_timeout: %s
  static_configs:
  - targets: [%q]
`, metricsTarget(), metricsService, backendResolution, backendResolution, strings.TrimSpace(string(harvest)))
	srv, err := promtest.Start(dir, config, promAddr)
	Expect(err).NotTo(HaveOccurred())
	p := &prometheus{Server: srv, api: srv.API}
	GinkgoWriter.Printf("prometheus on %s, files in %s\n", srv.URL, dir)
	rules, err := p.api.Rules(ctx)
	Expect(err).NotTo(HaveOccurred())
	var groups []string
	for _, g := range rules.Groups {
		groups = append(groups, g.Name)
	}
	Expect(groups).To(ConsistOf("storagebench.rules", "storagebench.alerts"), "the chart's rule groups are loaded")
	return p
}

func (p *prometheus) stop() {
	GinkgoWriter.Printf("prometheus stopped: %v\n", p.Stop())
}

// query evaluates an instant PromQL query now.
func (p *prometheus) query(q string) (model.Vector, error) { return p.Query(q) }

// firing lists the firing alerts named name, as their label sets.
func (p *prometheus) firing(name string) ([]model.LabelSet, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := p.api.Alerts(ctx)
	if err != nil {
		return nil, err
	}
	var out []model.LabelSet
	for _, a := range res.Alerts {
		if a.State == promv1.AlertStateFiring && string(a.Labels[model.AlertNameLabel]) == name {
			out = append(out, a.Labels)
		}
	}
	return out, nil
}

// chartRules renders the chart's PrometheusRule and returns its spec, a
// Prometheus rules file.
func chartRules() []byte {
	GinkgoHelper()
	out := run("bin/helm", "template", release, "charts/storagebench", "--namespace", systemNS,
		"--set", "prometheusRule.enabled=true", "--show-only", "templates/prometheusrule.yaml")
	var rule struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	Expect(yaml.Unmarshal([]byte(out), &rule)).To(Succeed())
	Expect(rule.Kind).To(Equal("PrometheusRule"))
	spec, err := yaml.Marshal(rule.Spec)
	Expect(err).NotTo(HaveOccurred())
	return spec
}

// backendResolution is the e2e source's: hack/blkcap polls the capped
// volumes' disk statistics every second, and Prometheus scrapes them as
// often.
const backendResolution = "1s"

// backendMetricsArgs are the chart values that point the manager at the
// suite's Prometheus, for every install of the suite.
// pausableClassQueries give local-block-pausable queries of its own
// (node-exporter's, docs/examples) from a source said to sample every 10 s:
// the pause spec's 18 s steps measure less than two such resolutions, so
// they are marked too short, through the chart's ConfigMap and the
// manager's --backend-metrics-classes.
const pausableClassQueries = `[{"storageClassName": "` + classPausable + `", "resolution": "10s",
  "readOps": "rate(node_disk_reads_completed_total{device=\"{{base .Path}}\"}[{{.Range}}])",
  "writeOps": "rate(node_disk_writes_completed_total{device=\"{{base .Path}}\"}[{{.Range}}])",
  "readBytes": "rate(node_disk_read_bytes_total{device=\"{{base .Path}}\"}[{{.Range}}])",
  "writeBytes": "rate(node_disk_written_bytes_total{device=\"{{base .Path}}\"}[{{.Range}}])",
  "samples": "count_over_time(node_disk_reads_completed_total{device=\"{{base .Path}}\"}[{{.Range}}])"}]`

func backendMetricsArgs() []string {
	return []string{"--set", "backendMetrics.prometheusURL=http://" + promAddr,
		"--set", "backendMetrics.resolution=" + backendResolution, "--set", "backendMetrics.timeout=5s",
		"--set-json", "backendMetrics.classes=" + pausableClassQueries}
}

// freePodReachableAddr is an address on node 0's pod bridge gateway
// (hack/cluster/up.sh: pods 10.88.0.0/16 on cni0, this machine 10.88.0.1),
// with a port nothing on this machine listens on. Pods on every node reach
// it (the other nodes route through this machine).
func freePodReachableAddr() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", ":0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return net.JoinHostPort("10.88.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}

// serviceAccountToken makes sure ns/name exists (bound to the chart's
// metrics-reader ClusterRole when reader) and returns a token for it from
// the TokenRequest API, valid for an hour.
func serviceAccountToken(ns, name string, reader bool) string {
	GinkgoHelper()
	ctx := context.Background()
	createIfAbsent(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	createIfAbsent(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	if reader {
		createIfAbsent(&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + ns + "-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReader},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		})
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

func createIfAbsent(obj client.Object) {
	GinkgoHelper()
	err := k8s.Create(context.Background(), obj)
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// metricsTarget is host:port of the chart's metrics Service.
func metricsTarget() string {
	GinkgoHelper()
	svc := &corev1.Service{}
	Expect(k8s.Get(context.Background(), keyOf(systemNS, metricsService), svc)).To(Succeed())
	Expect(svc.Spec.Ports).To(HaveLen(1))
	return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
}

// hasLabels: the label set has every pair of want.
func hasLabels(ls model.LabelSet, want map[string]string) bool {
	for k, v := range want {
		if string(ls[model.LabelName(k)]) != v {
			return false
		}
	}
	return true
}

// joinLabels renders label sets for failure messages.
func joinLabels(sets []model.LabelSet) string {
	var b strings.Builder
	for _, s := range sets {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}
