package deploy_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/health"
	"github.com/touchpoint/touchpoint/internal/sections"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/temporalclient"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// kubeDir holds the kustomize base, its components and overlays, seen from
// this package.
const kubeDir = "kubernetes"

// migratePhase selects what must be applied, and the migrate Job run to
// completion, before the Deployments roll (docs/operations.md shows it).
const migratePhase = "app.kubernetes.io/component notin (api,auth,worker)"

// kubeTypes are the kinds the manifests may use, each decoded into its
// type of k8s.io/api. Another kind fails the test until it is added here.
var kubeTypes = map[string]func() any{
	"v1/Namespace":                           func() any { return new(corev1.Namespace) },
	"v1/ServiceAccount":                      func() any { return new(corev1.ServiceAccount) },
	"v1/ConfigMap":                           func() any { return new(corev1.ConfigMap) },
	"v1/Service":                             func() any { return new(corev1.Service) },
	"apps/v1/Deployment":                     func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                    func() any { return new(appsv1.StatefulSet) },
	"batch/v1/Job":                           func() any { return new(batchv1.Job) },
	"policy/v1/PodDisruptionBudget":          func() any { return new(policyv1.PodDisruptionBudget) },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"networking.k8s.io/v1/NetworkPolicy":     func() any { return new(networkingv1.NetworkPolicy) },
}

// kubeObject is one document of a built overlay, decoded.
type kubeObject struct {
	kind, name string
	labels     map[string]string
	obj        any
}

// workload is a pod template and what owns it.
type workload struct {
	kind, name string
	labels     map[string]string // the object's own
	pod        *corev1.PodTemplateSpec
}

// built is one overlay as kustomize builds it.
type built struct {
	name      string
	dir       string // on the in-memory file system
	objects   []kubeObject
	namespace string
}

func (b built) all(kind string) []kubeObject {
	var out []kubeObject
	for _, o := range b.objects {
		if o.kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func (b built) get(kind, name string) any {
	for _, o := range b.objects {
		if o.kind == kind && o.name == name {
			return o.obj
		}
	}
	return nil
}

// deployment is the Deployment of Touchpoint's process component (its
// pods' app.kubernetes.io/component), whatever its name.
func (b built) deployment(component string) *appsv1.Deployment {
	for _, o := range b.all("Deployment") {
		if d := o.obj.(*appsv1.Deployment); ours(&d.Spec.Template) && d.Spec.Template.Labels["app.kubernetes.io/component"] == component {
			return d
		}
	}
	return nil
}

func (b built) workloads() []workload {
	var out []workload
	for _, o := range b.objects {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{o.kind, o.name, v.Labels, &v.Spec.Template})
		case *appsv1.StatefulSet:
			out = append(out, workload{o.kind, o.name, v.Labels, &v.Spec.Template})
		case *batchv1.Job:
			out = append(out, workload{o.kind, o.name, v.Labels, &v.Spec.Template})
		}
	}
	return out
}

// ours tells a pod of Touchpoint's from the dev overlay's services.
func ours(pod *corev1.PodTemplateSpec) bool {
	return pod.Labels["app.kubernetes.io/name"] == "touchpoint"
}

// kubeFS copies deploy/kubernetes into an in-memory file system, so that
// variants of an overlay can be built without touching the checkout.
func kubeFS(t *testing.T) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	require.NoError(t, filepath.WalkDir(kubeDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fs.WriteFile("/"+filepath.ToSlash(p), b)
	}))
	return fs
}

// buildKustomization builds dir with the kustomize Go API and decodes each
// document strictly into its k8s.io/api type, as the API server would: an
// unknown or misspelt field, a field of the wrong case or a repeated one
// fails.
func buildKustomization(t *testing.T, fs filesys.FileSystem, name, dir string) built {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	require.NoError(t, err, "kustomize build %s", dir)
	b := built{name: name, dir: dir}
	for _, r := range m.Resources() {
		id := r.GetApiVersion() + "/" + r.GetKind()
		newObj, ok := kubeTypes[id]
		require.True(t, ok, "%s: %s %s is a kind this test does not know; add it to kubeTypes", name, id, r.GetName())
		y, err := r.AsYAML()
		require.NoError(t, err)
		j, err := sigsyaml.YAMLToJSON(y)
		require.NoError(t, err)
		obj := newObj()
		strict, err := kjson.UnmarshalStrict(j, obj, kjson.DisallowUnknownFields)
		require.NoError(t, err, "%s: %s %s", name, r.GetKind(), r.GetName())
		require.Empty(t, strict, "%s: %s %s does not match the Kubernetes API", name, r.GetKind(), r.GetName())
		meta := obj.(metav1.Object)
		if ns := meta.GetNamespace(); ns != "" {
			b.namespace = ns
		}
		b.objects = append(b.objects, kubeObject{kind: r.GetKind(), name: r.GetName(), labels: meta.GetLabels(), obj: obj})
	}
	return b
}

// buildOverlays builds every overlay, and the production overlay once with
// each component of components/ in place of its own.
func buildOverlays(t *testing.T) []built {
	t.Helper()
	fs := kubeFS(t)
	var out []built
	overlays, err := os.ReadDir(filepath.Join(kubeDir, "overlays"))
	require.NoError(t, err)
	for _, o := range overlays {
		out = append(out, buildKustomization(t, fs, o.Name(), "/"+kubeDir+"/overlays/"+o.Name()))
	}
	require.GreaterOrEqual(t, len(out), 2, "the dev and production overlays")

	components, err := os.ReadDir(filepath.Join(kubeDir, "components"))
	require.NoError(t, err)
	prod := "/" + kubeDir + "/overlays/production"
	raw, err := fs.ReadFile(prod + "/kustomization.yaml")
	require.NoError(t, err)
	for _, c := range components {
		var k map[string]any
		require.NoError(t, yaml.Unmarshal(raw, &k))
		k["components"] = []string{"../../components/" + c.Name()}
		variant, err := yaml.Marshal(k)
		require.NoError(t, err)
		vfs := kubeFS(t)
		require.NoError(t, vfs.WriteFile(prod+"/kustomization.yaml", variant))
		out = append(out, buildKustomization(t, vfs, "production+"+c.Name(), prod))
	}
	return out
}

// TestKubernetesManifests builds every overlay with kustomize and checks
// it against the Kubernetes API types, the configuration, the processes'
// listeners and routes, the Dockerfile and docker-compose.yml.
func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	for _, b := range buildOverlays(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			checkObjects(t, b)
			checkSecurity(t, b)
			checkImages(t, b)
			cfgs := checkTouchpointPods(t, b)
			checkServices(t, b, cfgs)
			checkScaling(t, b)
			checkMigratePhase(t, b)
			checkNetworkPolicies(t, b)
			checkWorkerBuilds(t, b, cfgs["worker"])
			if b.name == "dev" {
				checkDevConnections(t, b, cfgs)
			}
		})
	}
}

// checkObjects: the processes, and nothing secret.
func checkObjects(t *testing.T, b built) {
	for _, name := range []string{"api", "auth", "worker"} {
		assert.NotNil(t, b.deployment(name), "a Deployment runs %s", name)
	}
	assert.NotNil(t, b.get("Job", "migrate"), "Job migrate")
	for _, name := range []string{"api", "auth"} {
		assert.NotNil(t, b.get("Service", name), "Service %s", name)
	}
	assert.NotEmpty(t, b.namespace, "an overlay names its namespace")
	ns, _ := b.get("Namespace", b.namespace).(*corev1.Namespace)
	if assert.NotNil(t, ns, "the overlay creates its namespace %s", b.namespace) {
		assert.Equal(t, "restricted", ns.Labels["pod-security.kubernetes.io/enforce"], "the restricted Pod Security Standard")
	}
}

// checkSecurity: every pod, ours and the dev services alike, runs
// non-root, without privileges, on a read-only root filesystem, with
// requests and limits, and without the Kubernetes API's token.
func checkSecurity(t *testing.T, b built) {
	for _, w := range b.workloads() {
		pod := w.pod.Spec
		where := w.kind + " " + w.name
		if sc := pod.SecurityContext; assert.NotNil(t, sc, where) {
			assert.Equal(t, ptrTrue, sc.RunAsNonRoot, "%s: runAsNonRoot", where)
			if assert.NotNil(t, sc.RunAsUser, where) {
				assert.NotZero(t, *sc.RunAsUser, "%s: runAsUser", where)
			}
			if assert.NotNil(t, sc.SeccompProfile, where) {
				assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type, where)
			}
		}
		assert.Equal(t, ptrFalse, pod.AutomountServiceAccountToken, "%s: no service account token", where)
		assert.False(t, pod.HostNetwork || pod.HostPID || pod.HostIPC, where)
		for _, v := range pod.Volumes {
			assert.Nil(t, v.HostPath, "%s: volume %s on the host", where, v.Name)
		}
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			where := where + " container " + c.Name
			if sc := c.SecurityContext; assert.NotNil(t, sc, where) {
				assert.Equal(t, ptrFalse, sc.AllowPrivilegeEscalation, "%s: allowPrivilegeEscalation", where)
				assert.Equal(t, ptrTrue, sc.ReadOnlyRootFilesystem, "%s: readOnlyRootFilesystem", where)
				assert.NotEqual(t, ptrTrue, sc.Privileged, where)
				if assert.NotNil(t, sc.Capabilities, where) {
					assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, "%s: drops every capability", where)
					assert.Empty(t, sc.Capabilities.Add, where)
				}
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[r]
				limit, hasLimit := c.Resources.Limits[r]
				if assert.True(t, hasReq && hasLimit, "%s: requests and limits of %s", where, r) {
					assert.LessOrEqual(t, req.Cmp(limit), 0, "%s: %s request above its limit", where, r)
				}
			}
		}
	}
	for _, kind := range []string{"Secret"} {
		assert.Empty(t, b.all(kind), "secrets are created beside the manifests, never in them")
	}
}

var (
	ptrTrue  = new(true)
	ptrFalse = new(false)
)

// checkImages: every Touchpoint container runs one image, the Dockerfile's,
// at a pinned tag; every other image is pinned, to the tag
// docker-compose.yml runs or, for Temporal, to the version go.mod pins.
func checkImages(t *testing.T, b built) {
	compose := mustLoadCompose(t)
	composeTags := map[string]string{}
	for _, s := range compose.Services {
		if repo, tag, ok := strings.Cut(s.Image, ":"); ok && s.Build == nil {
			composeTags[repo] = tag
		}
	}
	composeTags["temporalio/admin-tools"] = moduleVersion(t, "go.temporal.io/server")

	stages := parseDockerfile(t)
	final := stages[len(stages)-1]
	uid, err := strconv.ParseInt(strings.Split(final.last("USER"), ":")[0], 10, 64)
	require.NoError(t, err, "the Dockerfile's USER is numeric")
	exposed := strings.Fields(strings.Join(final.all("EXPOSE"), " "))

	var touchpointImages []string
	for _, w := range b.workloads() {
		for _, c := range w.pod.Spec.Containers {
			where := w.kind + " " + w.name + " container " + c.Name
			repo, tag, ok := strings.Cut(c.Image, ":")
			assert.True(t, ok && tag != "" && tag != "latest", "%s: image %q is not pinned to a version", where, c.Image)
			if !ours(w.pod) {
				if want, known := composeTags[repo]; assert.True(t, known, "%s: %s is not an image docker-compose.yml runs", where, repo) {
					assert.Equal(t, repo+":"+want, c.Image, where)
				}
				continue
			}
			touchpointImages = append(touchpointImages, c.Image)
			assert.Empty(t, c.Command, "%s: keeps the image's entrypoint, the touchpoint binary", where)
			if sc := w.pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
				assert.Equal(t, uid, *sc.RunAsUser, "%s: runs as the Dockerfile's user", where)
			}
			for _, p := range c.Ports {
				assert.Contains(t, exposed, strconv.Itoa(int(p.ContainerPort)), "%s: port %d is not one the Dockerfile exposes", where, p.ContainerPort)
			}
		}
	}
	slices.Sort(touchpointImages)
	assert.Len(t, slices.Compact(touchpointImages), 1, "every process, migrate included, runs the same release: %v", touchpointImages)
}

// secretSamples stand in for the values of the Secrets the manifests refer
// to; an overlay's kustomization.yaml may give its own in a comment
// ("#   NAME=value"), as the dev overlay does, and those are used instead.
var secretSamples = map[string]string{
	"DATABASE_URL":          "postgres://touchpoint:pw@db.example.com:5432/touchpoint?sslmode=verify-full",
	"DATABASE_READ_URL":     "postgres://touchpoint:pw@db-replica.example.com:5432/touchpoint?sslmode=verify-full",
	"TOUCHPOINT_SECRET_KEY": testSecretKey,
	"TOUCHPOINT_SMTP_URL":   "smtp://touchpoint:pw@smtp.example.com:587?starttls=required",
	"TEMPORAL_API_KEY":      "temporal-api-key",
}

// documentedSecrets reads the "#   NAME=value" lines of an overlay's
// kustomization.yaml: the Secret it tells its user to create.
func documentedSecrets(t *testing.T, b built) map[string]string {
	raw, err := os.ReadFile(filepath.Join(kubeDir, "overlays", strings.Split(b.name, "+")[0], "kustomization.yaml"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^#\s+([A-Z][A-Z0-9_]+)=(\S+)$`).FindAllStringSubmatch(string(raw), -1) {
		if !strings.HasPrefix(m[2], "<") { // <openssl rand -hex 32>
			out[m[1]] = m[2]
		}
	}
	return out
}

// process is what a Touchpoint container runs: its subcommand and its
// configuration as the process loads it from the container's environment.
type process struct {
	workload  workload
	container corev1.Container
	cfg       config.Config
	temporal  temporalclient.Config
}

// checkTouchpointPods: each Touchpoint container's environment names only
// variables the configuration reads, takes every credential from a Secret,
// and loads and validates as the process does at start; its probes ask
// routes the process serves on the port it listens on.
func checkTouchpointPods(t *testing.T, b built) map[string]process {
	documented := documentedSecrets(t, b)
	out := map[string]process{}
	for _, w := range b.workloads() {
		if !ours(w.pod) {
			continue
		}
		require.Len(t, w.pod.Spec.Containers, 1, "%s %s: the touchpoint container alone", w.kind, w.name)
		c := w.pod.Spec.Containers[0]
		where := w.kind + " " + w.name
		require.NotEmpty(t, c.Args, where)
		subcommand := c.Args[0]
		assert.Contains(t, []string{"api", "auth", "worker", "migrate"}, subcommand, where)
		assert.Equal(t, w.pod.Labels["app.kubernetes.io/component"], subcommand, "%s runs the subcommand of its component", where)

		env := containerEnv(t, b, w, c, documented)
		cfg, err := config.Load(func(k string) string { return env[k] })
		require.NoError(t, err, "%s: the configuration does not load", where)
		require.NoError(t, cfg.Validate(subcommand != "migrate"), "%s: the configuration does not validate", where)
		require.NoError(t, sections.Check(cfg.Settings), "%s: the configuration does not validate", where)
		temporal, err := temporalclient.Load(cfg.Settings.Get)
		require.NoError(t, err, where)
		if subcommand == "worker" {
			assert.NotEmpty(t, cfg.SMTPURL, "%s: `touchpoint worker` refuses to start without TOUCHPOINT_SMTP_URL", where)
		}
		if subcommand != "auth" && strings.HasPrefix(b.name, "production") {
			assert.True(t, temporal.TLS(), "%s: Temporal outside the cluster is reached over TLS", where)
		}
		p := process{workload: w, container: c, cfg: cfg, temporal: temporal}
		checkProbes(t, p)
		checkStop(t, p)
		out[subcommand] = p
	}
	return out
}

// containerEnv is the environment a Touchpoint container starts with: its
// ConfigMaps from the overlay, its Secrets from samples, and files of its
// secret volumes from made-up certificates.
func containerEnv(t *testing.T, b built, w workload, c corev1.Container, documented map[string]string) map[string]string {
	where := w.kind + " " + w.name
	env := map[string]string{}
	set := func(name, value, from string) {
		assert.True(t, slices.Contains(config.Variables, name), "%s sets %s (%s), which touchpoint does not read (config.Variables)", where, name, from)
		env[name] = value
	}
	for _, from := range c.EnvFrom {
		require.Nil(t, from.SecretRef, "%s: name each variable taken from a Secret (env with secretKeyRef)", where)
		require.NotNil(t, from.ConfigMapRef, where)
		cm, _ := b.get("ConfigMap", from.ConfigMapRef.Name).(*corev1.ConfigMap)
		require.NotNil(t, cm, "%s: ConfigMap %s is not in the overlay", where, from.ConfigMapRef.Name)
		for k, v := range cm.Data {
			assert.NotContains(t, config.SecretVariables, k, "%s: %s is a credential; take it from a Secret, not ConfigMap %s", where, k, cm.Name)
			set(k, v, "ConfigMap "+cm.Name)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			assert.NotContains(t, config.SecretVariables, e.Name, "%s: %s is a credential; take it from a Secret", where, e.Name)
			set(e.Name, e.Value, "value")
		case e.ValueFrom.SecretKeyRef != nil:
			value, ok := documented[e.Name]
			if !ok {
				value, ok = secretSamples[e.Name]
			}
			require.True(t, ok, "%s: add a sample of %s to secretSamples", where, e.Name)
			set(e.Name, value, "Secret "+e.ValueFrom.SecretKeyRef.Name)
		default:
			t.Errorf("%s: %s comes from neither a value nor a Secret", where, e.Name)
		}
	}
	// Files of secret volumes that variables name: a kubernetes.io/tls
	// Secret's keys, stood in for by a certificate made here.
	files := tlsFiles(t)
	for name, value := range env {
		if !strings.HasSuffix(name, "_PATH") {
			continue
		}
		dir, key := path.Split(value)
		mount := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return path.Clean(m.MountPath) == path.Clean(dir) })
		require.GreaterOrEqual(t, mount, 0, "%s: %s=%s is in no volume of the pod", where, name, value)
		assert.True(t, c.VolumeMounts[mount].ReadOnly, "%s: volume %s is mounted read-only", where, c.VolumeMounts[mount].Name)
		vol := slices.IndexFunc(w.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[mount].Name })
		require.GreaterOrEqual(t, vol, 0, where)
		require.NotNil(t, w.pod.Spec.Volumes[vol].Secret, "%s: %s is in a Secret's volume", where, name)
		file, ok := files[key]
		require.True(t, ok, "%s: %s names %s, which is no key of a kubernetes.io/tls Secret", where, name, key)
		env[name] = file
	}
	return env
}

// tlsFiles writes a client certificate and its key as a kubernetes.io/tls
// Secret holds them (tls.crt, tls.key, and ca.crt).
func tlsFiles(t *testing.T) map[string]string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "touchpoint"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	dir := t.TempDir()
	out := map[string]string{}
	for name, block := range map[string]*pem.Block{
		"tls.crt": {Type: "CERTIFICATE", Bytes: der},
		"ca.crt":  {Type: "CERTIFICATE", Bytes: der},
		"tls.key": {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		out[name] = filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(out[name], pem.EncodeToMemory(block), 0o600))
	}
	return out
}

// listeners are the addresses a process listens on, each with the paths
// it serves there (the wiring of cmd/touchpoint).
func listeners(t *testing.T, subcommand string, cfg config.Config) map[string][]string {
	switch subcommand {
	case "api":
		return map[string][]string{cfg.APIAddr: apiRoutes(t), cfg.MetricsAddr: {metrics.Path}}
	case "auth":
		return map[string][]string{
			cfg.AuthAddr:    {authserver.HealthPath, authserver.TokenPath, authserver.DiscoveryPath, authserver.JWKSPath},
			cfg.MetricsAddr: {metrics.Path},
		}
	case "worker":
		return map[string][]string{cfg.WorkerAddr: {health.LivePath, health.ReadyPath, metrics.Path}}
	}
	return nil
}

// apiRoutes are the API's GET paths without parameters, from the OpenAPI
// document, which apiserver's tests hold to its route table.
func apiRoutes(t *testing.T) []string {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(readFile(t, "apiserver/openapi.yaml")), &doc))
	var out []string
	for p, ops := range doc.Paths {
		if _, ok := ops["get"]; ok && !strings.Contains(p, "{") {
			out = append(out, p)
		}
	}
	return out
}

// portOf resolves a probe's or a Service's port against a container.
func portOf(c corev1.Container, p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.Int {
		return p.IntVal, slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.ContainerPort == p.IntVal })
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// servedAt returns the paths served on port, and whether the process
// listens there on every interface of the pod.
func servedAt(t *testing.T, p process, port int32) []string {
	var out []string
	for addr, paths := range listeners(t, p.container.Args[0], p.cfg) {
		if addr == "" {
			continue
		}
		host, portStr, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		if portStr == strconv.Itoa(int(port)) {
			assert.Contains(t, []string{"", "0.0.0.0", "::"}, host, "%s listens on %s: unreachable from outside the pod", p.workload.name, addr)
			out = append(out, paths...)
		}
	}
	return out
}

// checkProbes: each probe asks a path the process serves, on the port it
// serves it on; liveness never depends on another service, readiness of
// the API and the worker does; Prometheus is told where the metrics are.
func checkProbes(t *testing.T, p process) {
	where := p.workload.name
	c := p.container
	for _, cp := range c.Ports {
		assert.NotEmpty(t, servedAt(t, p, cp.ContainerPort), "%s: port %s (%d) is no listener of the process", where, cp.Name, cp.ContainerPort)
	}
	if p.workload.kind == "Job" {
		return
	}
	for kind, probe := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if !assert.NotNil(t, probe, "%s: %s probe", where, kind) || !assert.NotNil(t, probe.HTTPGet, "%s: %s probe over HTTP", where, kind) {
			continue
		}
		port, ok := portOf(c, probe.HTTPGet.Port)
		if assert.True(t, ok, "%s: %s probe's port %s is no port of the container", where, kind, probe.HTTPGet.Port.String()) {
			assert.Contains(t, servedAt(t, p, port), probe.HTTPGet.Path, "%s: %s probe asks %s on %d, which the process does not serve there", where, kind, probe.HTTPGet.Path, port)
		}
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil {
		assert.Contains(t, []string{health.LivePath, authserver.HealthPath}, c.LivenessProbe.HTTPGet.Path,
			"%s: liveness must not fail when PostgreSQL or Temporal does (a restart would not help)", where)
	}
	if sub := c.Args[0]; (sub == "api" || sub == "worker") && c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil {
		assert.Equal(t, health.ReadyPath, c.ReadinessProbe.HTTPGet.Path, "%s: readiness", where)
	}
	ann := p.workload.pod.Annotations
	assert.Equal(t, "true", ann["prometheus.io/scrape"], where)
	port, err := strconv.Atoi(ann["prometheus.io/port"])
	if assert.NoError(t, err, "%s: prometheus.io/port", where) {
		assert.Equal(t, metrics.Path, ann["prometheus.io/path"], where)
		assert.Contains(t, servedAt(t, p, int32(port)), metrics.Path, "%s: no metrics on port %d", where, port)
	}
}

// checkStop: the kubelet waits for a process to stop as it does on
// SIGTERM. A server drains — long enough for its readiness probe to fail
// and the Service to let go of it — and then finishes its requests; the
// worker finishes its running activities.
func checkStop(t *testing.T, p process) {
	if p.workload.kind == "Job" {
		return
	}
	where := p.workload.name
	grace := time.Duration(ptrOr(p.workload.pod.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
	switch p.container.Args[0] {
	case "api", "auth":
		assert.Positive(t, p.cfg.ShutdownDrain, "%s: TOUCHPOINT_SHUTDOWN_DRAIN, the time the Service takes to let go of a stopping pod", where)
		assert.GreaterOrEqual(t, grace, p.cfg.ShutdownDrain+config.ShutdownGrace,
			"%s: terminationGracePeriodSeconds covers the drain (%s) and the requests in flight (%s)", where, p.cfg.ShutdownDrain, config.ShutdownGrace)
		if probe := p.container.ReadinessProbe; probe != nil {
			noticed := time.Duration(probe.PeriodSeconds*probe.FailureThreshold) * time.Second
			assert.LessOrEqual(t, noticed, p.cfg.ShutdownDrain, "%s: the readiness probe notices the drain before it ends", where)
		}
	case "worker":
		assert.Greater(t, grace, worker.DefaultStopTimeout,
			"%s: the running activities get %s to finish before the kubelet kills the worker", where, worker.DefaultStopTimeout)
	}
}

// podsOf returns the pod templates a label selector picks.
func podsOf(b built, sel labels.Selector) []workload {
	var out []workload
	for _, w := range b.workloads() {
		if !sel.Empty() && sel.Matches(labels.Set(w.pod.Labels)) {
			out = append(out, w)
		}
	}
	return out
}

// checkServices: every Service picks pods and points at their ports; the
// API's and the issuer's point at the ports the processes listen on, and
// the API finds the issuer by the Service TOUCHPOINT_OIDC_DISCOVERY_URL
// names.
func checkServices(t *testing.T, b built, procs map[string]process) {
	for _, o := range b.all("Service") {
		svc := o.obj.(*corev1.Service)
		pods := podsOf(b, labels.SelectorFromSet(svc.Spec.Selector))
		if !assert.NotEmpty(t, pods, "Service %s selects no pods", svc.Name) {
			continue
		}
		for _, w := range pods {
			for _, sp := range svc.Spec.Ports {
				_, ok := portOf(w.pod.Spec.Containers[0], sp.TargetPort)
				assert.True(t, ok, "Service %s: port %s is no port of %s", svc.Name, sp.TargetPort.String(), w.name)
			}
		}
	}
	for name, addr := range map[string]string{"api": procs["api"].cfg.APIAddr, "auth": procs["auth"].cfg.AuthAddr} {
		_, listen, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		assert.Equal(t, listen, strconv.Itoa(int(serviceTarget(t, b, name, ""))), "Service %s leads to the process's listen port", name)
	}
	discovery, err := url.Parse(procs["api"].cfg.OIDCDiscoveryURL)
	require.NoError(t, err)
	assert.Equal(t, procs["auth"].cfg.AuthURL, procs["api"].cfg.AuthURL, "the API expects the iss the issuer puts into tokens")
	assert.Contains(t, procs["api"].cfg.OIDCIssuers, procs["api"].cfg.AuthURL, "the API accepts the built-in issuer's tokens")
	_, authPort, _ := net.SplitHostPort(procs["auth"].cfg.AuthAddr)
	assert.Equal(t, authPort, strconv.Itoa(int(serviceTarget(t, b, discovery.Hostname(), discovery.Port()))),
		"TOUCHPOINT_OIDC_DISCOVERY_URL %s leads to the issuer", discovery)
}

// serviceTarget is the container port that Service name's port (its only
// one when port is "") leads to.
func serviceTarget(t *testing.T, b built, name, port string) int32 {
	svc, _ := b.get("Service", name).(*corev1.Service)
	require.NotNil(t, svc, "no Service %s", name)
	for _, sp := range svc.Spec.Ports {
		if port != "" && strconv.Itoa(int(sp.Port)) != port {
			continue
		}
		pods := podsOf(b, labels.SelectorFromSet(svc.Spec.Selector))
		require.NotEmpty(t, pods)
		n, ok := portOf(pods[0].pod.Spec.Containers[0], sp.TargetPort)
		require.True(t, ok)
		return n
	}
	t.Fatalf("Service %s has no port %s", name, port)
	return 0
}

// checkScaling: a disruption budget for every Deployment, the API scaled
// on CPU, the worker on the invites task queue's backlog served by the
// Prometheus Adapter rule of prometheus-adapter.yaml.
func checkScaling(t *testing.T, b built) {
	for _, o := range b.all("Deployment") {
		d := o.obj.(*appsv1.Deployment)
		covered := false
		for _, p := range b.all("PodDisruptionBudget") {
			pdb := p.obj.(*policyv1.PodDisruptionBudget)
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			require.NoError(t, err)
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				covered = true
				assert.True(t, pdb.Spec.MaxUnavailable != nil || pdb.Spec.MinAvailable != nil, "PodDisruptionBudget %s", pdb.Name)
			}
		}
		if ours(&d.Spec.Template) {
			assert.True(t, covered, "Deployment %s has no PodDisruptionBudget", d.Name)
		}
	}
	hpas := map[string]*autoscalingv2.HorizontalPodAutoscaler{}
	for _, o := range b.all("HorizontalPodAutoscaler") {
		h := o.obj.(*autoscalingv2.HorizontalPodAutoscaler)
		assert.Equal(t, "Deployment", h.Spec.ScaleTargetRef.Kind)
		d, _ := b.get("Deployment", h.Spec.ScaleTargetRef.Name).(*appsv1.Deployment)
		if assert.NotNil(t, d, "HorizontalPodAutoscaler %s scales nothing", h.Name) {
			hpas[d.Spec.Template.Labels["app.kubernetes.io/component"]] = h
		}
	}
	if api := hpas["api"]; assert.NotNil(t, api, "the API scales") {
		require.Len(t, api.Spec.Metrics, 1)
		m := api.Spec.Metrics[0]
		assert.Equal(t, autoscalingv2.ResourceMetricSourceType, m.Type)
		if assert.NotNil(t, m.Resource) {
			assert.Equal(t, corev1.ResourceCPU, m.Resource.Name)
		}
	}
	if w := hpas["worker"]; assert.NotNil(t, w, "the worker scales") {
		require.Len(t, w.Spec.Metrics, 1)
		m := w.Spec.Metrics[0]
		assert.Equal(t, autoscalingv2.ExternalMetricSourceType, m.Type)
		if assert.NotNil(t, m.External) {
			checkAdapterRule(t, m.External.Metric)
		}
	}
}

// adapterRule is one rule of the Prometheus Adapter's configuration
// (sigs.k8s.io/prometheus-adapter, pkg/config).
type adapterRule struct {
	SeriesQuery   string `json:"seriesQuery"`
	SeriesFilters []struct {
		Is    string `json:"is,omitempty"`
		IsNot string `json:"isNot,omitempty"`
	} `json:"seriesFilters,omitempty"`
	Resources struct {
		Template   string                       `json:"template,omitempty"`
		Overrides  map[string]map[string]string `json:"overrides,omitempty"`
		Namespaced *bool                        `json:"namespaced,omitempty"`
	} `json:"resources"`
	Name struct {
		Matches string `json:"matches"`
		As      string `json:"as"`
	} `json:"name"`
	MetricsQuery string `json:"metricsQuery"`
}

// checkAdapterRule: the external metric the worker scales on is one the
// rule serves, from a series the Temporal server of go.mod exports, for
// the invites task queue, and not confined to the HPA's namespace (whose
// name is no Temporal namespace).
func checkAdapterRule(t *testing.T, m autoscalingv2.MetricIdentifier) {
	var values struct {
		Rules struct {
			Default  bool          `json:"default"`
			External []adapterRule `json:"external"`
		} `json:"rules"`
	}
	raw, err := sigsyaml.YAMLToJSON([]byte(readFile(t, "deploy/kubernetes/prometheus-adapter.yaml")))
	require.NoError(t, err)
	strict, err := kjson.UnmarshalStrict(raw, &values, kjson.DisallowUnknownFields)
	require.NoError(t, err)
	require.Empty(t, strict, "prometheus-adapter.yaml")
	i := slices.IndexFunc(values.Rules.External, func(r adapterRule) bool { return r.Name.As == m.Name })
	require.GreaterOrEqual(t, i, 0, "no external rule of prometheus-adapter.yaml serves %s", m.Name)
	rule := values.Rules.External[i]
	assert.Equal(t, ptrFalse, rule.Resources.Namespaced, "the rule must not match Temporal's namespace label against the HPA's")

	series := regexp.MustCompile(`^([a-z_]+)\{`).FindStringSubmatch(rule.SeriesQuery)
	require.NotNil(t, series, "seriesQuery %q names its series", rule.SeriesQuery)
	assert.Regexp(t, rule.Name.Matches, series[1])
	by := regexp.MustCompile(`by \(([^)]*)\)`).FindStringSubmatch(rule.MetricsQuery)
	require.NotNil(t, by, "metricsQuery %q sums by the labels the HPA selects on", rule.MetricsQuery)
	kept := strings.Split(strings.ReplaceAll(by[1], " ", ""), ",")
	require.NotNil(t, m.Selector)
	for k := range m.Selector.MatchLabels {
		assert.Contains(t, kept, k, "the HPA selects on %s, which the rule sums away", k)
	}
	assert.Equal(t, workflows.TaskQueue, m.Selector.MatchLabels["taskqueue"], "the backlog of the invites task queue")

	// The series is the Temporal server's own, in the version go.mod pins.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Log("no go command in PATH: the series name is not checked against the Temporal server")
		return
	}
	cmd := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}", "go.temporal.io/server")
	cmd.Dir = repoRoot
	dir, err := cmd.Output()
	require.NoError(t, err)
	defs, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "common", "metrics", "metric_defs.go"))
	require.NoError(t, err)
	assert.Contains(t, string(defs), fmt.Sprintf("NewGaugeDef(%q)", series[1]), "the Temporal server exports %s", series[1])
}

// checkMigratePhase: what docs/operations.md applies first, with the
// migrate Job, holds everything the Job needs and none of the processes.
func checkMigratePhase(t *testing.T, b built) {
	assert.True(t, strings.Contains(readFile(t, "docs/operations.md"), "-l '"+migratePhase+"'"),
		"docs/operations.md applies the migration first with -l '%s'", migratePhase)
	sel, err := labels.Parse(migratePhase)
	require.NoError(t, err)
	first := map[string]bool{}
	for _, o := range b.objects {
		if sel.Matches(labels.Set(o.labels)) {
			first[o.kind+"/"+o.name] = true
		}
	}
	assert.True(t, first["Job/migrate"], "the migrate Job runs first")
	for _, name := range []string{"api", "auth", "worker"} {
		assert.False(t, first["Deployment/"+name], "%s rolls after the migration", name)
	}
	job := b.get("Job", "migrate").(*batchv1.Job)
	pod := job.Spec.Template.Spec
	assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)
	assert.True(t, first["ServiceAccount/"+pod.ServiceAccountName], "the Job's service account comes with it")
	for _, from := range pod.Containers[0].EnvFrom {
		assert.True(t, first["ConfigMap/"+from.ConfigMapRef.Name], "the Job's ConfigMap comes with it")
	}
	// In the dev overlay, what it migrates runs in the cluster: it comes first too.
	for _, w := range b.workloads() {
		if !ours(w.pod) {
			assert.True(t, first[w.kind+"/"+w.name], "%s %s is there before the migration", w.kind, w.name)
		}
	}
}

// checkWorkerBuilds: a versioned worker runs as one Deployment per
// release, beside the last release's until that drains, so its
// Deployment, budget and autoscaler carry the release — the image's tag,
// which is the worker's Build ID — in their names and selectors, and its
// autoscaler follows its own build's backlog. An unversioned worker is
// replaced in place: one Deployment, named worker.
func checkWorkerBuilds(t *testing.T, b built, w process) {
	d := b.deployment("worker")
	_, tag, _ := strings.Cut(w.container.Image, ":")
	if !w.cfg.WorkerVersioning {
		assert.Equal(t, "worker", d.Name)
		return
	}
	assert.Equal(t, "worker-"+tag, d.Name, "the worker's Deployment is named after its release, the image's tag")
	assert.Equal(t, tag, d.Spec.Selector.MatchLabels["touchpoint.io/build"], "the Deployment selects its own build's pods")
	assert.Equal(t, tag, d.Spec.Template.Labels["touchpoint.io/build"])
	for _, o := range b.all("PodDisruptionBudget") {
		if pdb := o.obj.(*policyv1.PodDisruptionBudget); pdb.Spec.Selector.MatchLabels["app.kubernetes.io/component"] == "worker" {
			assert.Equal(t, "worker-"+tag, pdb.Name)
			assert.Equal(t, tag, pdb.Spec.Selector.MatchLabels["touchpoint.io/build"], "the budget counts its own build's pods")
		}
	}
	for _, o := range b.all("HorizontalPodAutoscaler") {
		if h := o.obj.(*autoscalingv2.HorizontalPodAutoscaler); h.Spec.ScaleTargetRef.Name == d.Name {
			assert.Equal(t, "worker-"+tag, h.Name)
			assert.Equal(t, tag, h.Spec.Metrics[0].External.Metric.Selector.MatchLabels["worker_build_id"],
				"the autoscaler follows its own build's backlog")
		}
	}
}

// checkDevConnections: in the dev overlay, every service a process
// connects to is a Service of the overlay on the port of the address, and
// PostgreSQL has a connection for every pool at the autoscalers' most
// replicas.
func checkDevConnections(t *testing.T, b built, procs map[string]process) {
	for sub, p := range procs {
		addrs := map[string]string{"TEMPORAL_ADDRESS": p.temporal.Address()}
		for name, raw := range map[string]string{"DATABASE_URL": p.cfg.DatabaseURL, "TOUCHPOINT_SMTP_URL": p.cfg.SMTPURL} {
			if raw != "" {
				u, err := url.Parse(raw)
				require.NoError(t, err)
				addrs[name] = u.Host
			}
		}
		for name, addr := range addrs {
			if sub == "auth" && name == "TEMPORAL_ADDRESS" {
				continue // the issuer does not use Temporal
			}
			host, port, err := net.SplitHostPort(addr)
			require.NoError(t, err, "%s: %s", sub, name)
			serviceTarget(t, b, host, port) // fails when there is no such Service and port
		}
	}

	ss, _ := b.get("StatefulSet", "postgres").(*appsv1.StatefulSet)
	require.NotNil(t, ss)
	m := regexp.MustCompile(`max_connections=(\d+)`).FindStringSubmatch(strings.Join(ss.Spec.Template.Spec.Containers[0].Args, " "))
	require.NotNil(t, m, "postgres sets max_connections")
	maxConns, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	used := procs["migrate"].cfg.DBMaxConns
	for _, name := range []string{"api", "auth", "worker"} {
		d := b.deployment(name)
		replicas := int(ptrOr(d.Spec.Replicas, 1))
		for _, o := range b.all("HorizontalPodAutoscaler") {
			if h := o.obj.(*autoscalingv2.HorizontalPodAutoscaler); h.Spec.ScaleTargetRef.Name == d.Name {
				replicas = int(h.Spec.MaxReplicas)
			}
		}
		used += replicas * procs[name].cfg.DBMaxConns
	}
	const reserved = 3 // superuser_reserved_connections
	assert.LessOrEqual(t, used, maxConns-reserved, "connections the dev cluster's processes may open")
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
