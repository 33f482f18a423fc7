package deploy_test

import (
	"cmp"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// endpoint is one end of a connection: a pod (its labels, its namespace
// and the namespace's labels, its ports) or an address outside the cluster.
type endpoint struct {
	name     string
	pod      map[string]string
	ns       string
	nsLabels map[string]string
	ports    []corev1.ContainerPort
	ip       net.IP
}

func podEndpoint(b built, w workload) endpoint {
	var ports []corev1.ContainerPort
	for _, c := range w.pod.Spec.Containers {
		ports = append(ports, c.Ports...)
	}
	return endpoint{name: w.kind + " " + w.name, pod: w.pod.Labels, ns: b.namespace,
		nsLabels: map[string]string{"kubernetes.io/metadata.name": b.namespace}, ports: ports}
}

func address(ip string) endpoint { return endpoint{name: ip, ip: net.ParseIP(ip)} }

// The addresses the checks connect from and to.
var (
	anyone   = address("203.0.113.10")  // a client on the internet
	public   = address("198.51.100.20") // a mail relay, a webhook endpoint, a provider
	private  = address("10.1.2.3")      // another service of the company's network
	metadata = address("169.254.169.254")
	// Prometheus, in the namespace the policies let scrape.
	prometheus = endpoint{name: "prometheus", pod: map[string]string{"app.kubernetes.io/name": "prometheus"}, ns: "monitoring",
		nsLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}
)

// connects evaluates the overlay's NetworkPolicies as a conforming network
// plugin does: a pod selected by no policy of a direction is open in it;
// otherwise a connection needs a rule of some policy selecting the pod.
func connects(t *testing.T, b built, from, to endpoint, proto corev1.Protocol, port int32) bool {
	t.Helper()
	egress := from.pod == nil || from.ns != b.namespace || allows(t, b, from, to, to, networkingv1.PolicyTypeEgress, proto, port)
	ingress := to.pod == nil || to.ns != b.namespace || allows(t, b, to, from, to, networkingv1.PolicyTypeIngress, proto, port)
	return egress && ingress
}

// allows tells whether the policies selecting pod let it talk to peer in
// direction dir; dst resolves named ports.
func allows(t *testing.T, b built, pod, peer, dst endpoint, dir networkingv1.PolicyType, proto corev1.Protocol, port int32) bool {
	selected := false
	for _, o := range b.all("NetworkPolicy") {
		np := o.obj.(*networkingv1.NetworkPolicy)
		if !slices.Contains(np.Spec.PolicyTypes, dir) || !selects(t, &np.Spec.PodSelector, pod.pod) {
			continue
		}
		selected = true
		if dir == networkingv1.PolicyTypeEgress {
			for _, r := range np.Spec.Egress {
				if portsMatch(r.Ports, dst, proto, port) && peersMatch(t, r.To, peer, b.namespace) {
					return true
				}
			}
		} else {
			for _, r := range np.Spec.Ingress {
				if portsMatch(r.Ports, dst, proto, port) && peersMatch(t, r.From, peer, b.namespace) {
					return true
				}
			}
		}
	}
	return !selected
}

func selects(t *testing.T, sel *metav1.LabelSelector, set map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	require.NoError(t, err)
	return s.Matches(labels.Set(set))
}

func portsMatch(ports []networkingv1.NetworkPolicyPort, dst endpoint, proto corev1.Protocol, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if ptrOr(p.Protocol, corev1.ProtocolTCP) != proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.Int:
			if port == p.Port.IntVal || (p.EndPort != nil && port >= p.Port.IntVal && port <= *p.EndPort) {
				return true
			}
		default: // a named port of the destination pod
			if slices.ContainsFunc(dst.ports, func(cp corev1.ContainerPort) bool {
				return cp.Name == p.Port.StrVal && cp.ContainerPort == port && cmp.Or(cp.Protocol, corev1.ProtocolTCP) == proto
			}) {
				return true
			}
		}
	}
	return false
}

func peersMatch(t *testing.T, peers []networkingv1.NetworkPolicyPeer, e endpoint, policyNS string) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		if p.IPBlock != nil {
			if e.ip != nil && inBlock(t, p.IPBlock, e.ip) {
				return true
			}
			continue
		}
		if e.pod == nil {
			continue // pod and namespace selectors pick pods, never addresses outside
		}
		nsOK := e.ns == policyNS
		if p.NamespaceSelector != nil {
			nsOK = selects(t, p.NamespaceSelector, e.nsLabels)
		}
		if nsOK && (p.PodSelector == nil || selects(t, p.PodSelector, e.pod)) {
			return true
		}
	}
	return false
}

func inBlock(t *testing.T, block *networkingv1.IPBlock, ip net.IP) bool {
	_, cidr, err := net.ParseCIDR(block.CIDR)
	require.NoError(t, err)
	if !cidr.Contains(ip) {
		return false
	}
	for _, ex := range block.Except {
		_, n, err := net.ParseCIDR(ex)
		require.NoError(t, err)
		if n.Contains(ip) {
			return false
		}
	}
	return true
}

// checkNetworkPolicies: everything is denied unless allowed; from outside,
// only the API's and the issuer's HTTP ports are reached; only the worker
// and the issuer (the console's sign-in links) speak SMTP; only the worker
// reaches public addresses on any port (webhooks), never
// private or link-local ones; every process reaches DNS, PostgreSQL and
// Temporal, the API the issuer, Prometheus the metrics.
func checkNetworkPolicies(t *testing.T, b built) {
	denyAll := slices.ContainsFunc(b.all("NetworkPolicy"), func(o kubeObject) bool {
		np := o.obj.(*networkingv1.NetworkPolicy)
		return len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 &&
			len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 &&
			slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) && slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
	})
	assert.True(t, denyAll, "a policy denies every connection that no other allows")

	component := func(w workload) string {
		if !ours(w.pod) {
			return ""
		}
		return w.pod.Labels["app.kubernetes.io/component"]
	}
	endpoints := map[string]endpoint{}
	for _, w := range b.workloads() {
		e := podEndpoint(b, w)
		if c := component(w); c != "" {
			endpoints[c] = e
		}
		endpoints[w.name] = e

		for _, cp := range e.ports {
			fromOutside := connects(t, b, anyone, e, corev1.ProtocolTCP, cp.ContainerPort)
			want := (component(w) == "api" || component(w) == "auth") && cp.Name == "http"
			assert.Equal(t, want, fromOutside, "%s: port %s (%d) from outside the cluster", e.name, cp.Name, cp.ContainerPort)
		}
		isWorker := component(w) == "worker"
		mails := isWorker || component(w) == "auth"
		for _, port := range []int32{25, 465, 587, 2525} {
			assert.Equal(t, mails, connects(t, b, e, public, corev1.ProtocolTCP, port), "%s: SMTP (%d) out", e.name, port)
		}
		assert.Equal(t, isWorker, connects(t, b, e, public, corev1.ProtocolTCP, 8443), "%s: a webhook endpoint on any port", e.name)
		assert.False(t, connects(t, b, e, private, corev1.ProtocolTCP, 8443), "%s: a private address", e.name)
		assert.False(t, connects(t, b, e, metadata, corev1.ProtocolTCP, 80), "%s: the cloud's metadata service", e.name)
		if !ours(w.pod) {
			assert.False(t, connects(t, b, e, public, corev1.ProtocolTCP, 443), "%s: the dev services reach nothing outside", e.name)
			continue
		}
		assert.True(t, connects(t, b, e, private, corev1.ProtocolUDP, 53), "%s: DNS", e.name)
		if port, err := strconv.Atoi(w.pod.Annotations["prometheus.io/port"]); err == nil {
			assert.True(t, connects(t, b, prometheus, e, corev1.ProtocolTCP, int32(port)), "%s: Prometheus scrapes port %d", e.name, port)
		}
	}

	api, auth := endpoints["api"], endpoints["auth"]
	assert.True(t, connects(t, b, api, auth, corev1.ProtocolTCP, serviceTarget(t, b, "auth", "")), "the API discovers the issuer")
	for _, c := range []string{"api", "worker", "migrate", "auth"} {
		e := endpoints[c]
		if pg, ok := endpoints["postgres"]; ok { // dev: in the cluster
			assert.True(t, connects(t, b, e, pg, corev1.ProtocolTCP, 5432), "%s: PostgreSQL", c)
			if c != "auth" {
				assert.True(t, connects(t, b, e, endpoints["temporal"], corev1.ProtocolTCP, 7233), "%s: Temporal", c)
			}
			assert.Equal(t, c == "worker" || c == "auth", connects(t, b, e, endpoints["mailpit"], corev1.ProtocolTCP, 1025), "%s: mailpit's SMTP", c)
			continue
		}
		assert.True(t, connects(t, b, e, private, corev1.ProtocolTCP, 5432), "%s: PostgreSQL", c)
		if c != "auth" {
			assert.True(t, connects(t, b, e, public, corev1.ProtocolTCP, 7233), "%s: Temporal", c)
		}
	}
}
