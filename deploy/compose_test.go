package deploy_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
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

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/sections"
	"github.com/touchpoint/touchpoint/temporalclient"
)

// repoRoot is where the deployment files are, seen from this package.
const repoRoot = ".."

// testSecretKey stands in for the TOUCHPOINT_SECRET_KEY the user supplies.
const testSecretKey = "deploy-test-secret-key-0123456789abcdef"

// touchpointServices are the services of docker-compose.yml that run the
// image built from this repository, and the subcommand each one runs.
var touchpointServices = map[string]string{"migrate": "migrate", "auth": "auth", "api": "api", "worker": "worker"}

// userVars is the environment `docker compose` interpolates in the tests:
// what a user puts into their shell or .env.
func userVars() map[string]string { return map[string]string{"TOUCHPOINT_SECRET_KEY": testSecretKey} }

type composeFile struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

type service struct {
	Image       string       `yaml:"image"`
	Volumes     []string     `yaml:"volumes"`
	Build       any          `yaml:"build"`
	Entrypoint  any          `yaml:"entrypoint"`
	Command     any          `yaml:"command"`
	Environment envMap       `yaml:"environment"`
	Ports       []port       `yaml:"ports"`
	DependsOn   dependsOn    `yaml:"depends_on"`
	Healthcheck *healthcheck `yaml:"healthcheck"`
	Restart     string       `yaml:"restart"`
}

type healthcheck struct {
	Test any `yaml:"test"`
}

// envMap is a service's environment, in either of Compose's two forms.
type envMap map[string]string

func (e *envMap) UnmarshalYAML(n *yaml.Node) error {
	*e = envMap{}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			(*e)[n.Content[i].Value] = n.Content[i+1].Value
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			k, v, _ := strings.Cut(item.Value, "=")
			(*e)[k] = v
		}
	default:
		return fmt.Errorf("line %d: environment is neither a mapping nor a list", n.Line)
	}
	return nil
}

func (e envMap) getenv(name string) string { return e[name] }

// port is one published port, from the short ("[ip:]published:target") or
// the long syntax.
type port struct{ HostIP, Published, Target string }

func (p *port) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		var long struct {
			HostIP    string `yaml:"host_ip"`
			Published string `yaml:"published"`
			Target    string `yaml:"target"`
		}
		if err := n.Decode(&long); err != nil {
			return err
		}
		*p = port{long.HostIP, long.Published, long.Target}
		return nil
	}
	spec, _, _ := strings.Cut(n.Value, "/") // drop "/tcp"
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 1:
		*p = port{Target: parts[0]}
	case 2:
		*p = port{Published: parts[0], Target: parts[1]}
	case 3:
		*p = port{HostIP: parts[0], Published: parts[1], Target: parts[2]}
	default:
		return fmt.Errorf("line %d: cannot read port %q", n.Line, n.Value)
	}
	return nil
}

// dependsOn maps each dependency to its condition, from either form.
type dependsOn map[string]string

func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	*d = dependsOn{}
	if n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			(*d)[item.Value] = "service_started"
		}
		return nil
	}
	var long map[string]struct {
		Condition string `yaml:"condition"`
	}
	if err := n.Decode(&long); err != nil {
		return err
	}
	for name, dep := range long {
		(*d)[name] = cmpOr(dep.Condition, "service_started")
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// args turns a command, entrypoint or health check test into a list.
func args(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, len(v))
		for i, a := range v {
			out[i] = fmt.Sprint(a)
		}
		return out
	}
	return nil
}

// loadCompose reads docker-compose.yml as `docker compose` does: YAML with
// anchors and merge keys, then ${…} interpolation of every value with vars.
func loadCompose(vars map[string]string) (composeFile, error) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		return composeFile{}, err
	}
	var tree any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		return composeFile{}, err
	}
	if vars != nil {
		if tree, err = interpolateTree(tree, vars); err != nil {
			return composeFile{}, err
		}
	}
	resolved, err := yaml.Marshal(tree)
	if err != nil {
		return composeFile{}, err
	}
	var c composeFile
	err = yaml.Unmarshal(resolved, &c)
	return c, err
}

func mustLoadCompose(t *testing.T) composeFile {
	t.Helper()
	c, err := loadCompose(userVars())
	require.NoError(t, err)
	return c
}

func interpolateTree(v any, vars map[string]string) (any, error) {
	switch v := v.(type) {
	case string:
		return interpolate(v, vars)
	case map[string]any:
		for k, e := range v {
			var err error
			if v[k], err = interpolateTree(e, vars); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, e := range v {
			var err error
			if v[i], err = interpolateTree(e, vars); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// interpolate expands $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default},
// ${VAR:?error} and ${VAR?error} as Compose does.
func interpolate(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		switch {
		case strings.HasPrefix(rest, "$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", s)
			}
			val, err := expand(rest[1:end], vars)
			if err != nil {
				return "", err
			}
			b.WriteString(val)
			i += end + 1
		default:
			name := identifier.FindString(rest)
			if name == "" {
				return "", fmt.Errorf("invalid $ in %q (write $$ for a literal $)", s)
			}
			b.WriteString(vars[name])
			i += len(name)
		}
	}
	return b.String(), nil
}

func expand(expr string, vars map[string]string) (string, error) {
	name := identifier.FindString(expr)
	val, set := vars[name]
	switch op := expr[len(name):]; {
	case name == "":
		return "", fmt.Errorf("invalid ${%s}", expr)
	case op == "":
		return val, nil
	case strings.HasPrefix(op, ":-"):
		return cmpOr(val, op[2:]), nil
	case strings.HasPrefix(op, "-"):
		if !set {
			return op[1:], nil
		}
		return val, nil
	case strings.HasPrefix(op, ":?") && val == "", strings.HasPrefix(op, "?") && !set:
		return "", fmt.Errorf("required variable %s is missing a value: %s", name, strings.TrimLeft(op, ":?"))
	case strings.HasPrefix(op, ":?"), strings.HasPrefix(op, "?"):
		return val, nil
	}
	return "", fmt.Errorf("unsupported interpolation ${%s}", expr)
}

// loadConfig loads and validates a touchpoint service's environment as
// the process itself does at start.
func loadConfig(t *testing.T, s service) config.Config {
	t.Helper()
	cfg, err := config.Load(s.Environment.getenv)
	require.NoError(t, err)
	require.NoError(t, cfg.Validate(true), "the environment of the service does not validate")
	require.NoError(t, sections.Check(cfg.Settings), "the environment of the service does not validate")
	return cfg
}

// temporalOf is the Temporal client's configuration as a process reads
// it from the values cfg read.
func temporalOf(t *testing.T, cfg config.Config) temporalclient.Config {
	t.Helper()
	temporal, err := temporalclient.Load(cfg.Settings.Get)
	require.NoError(t, err)
	return temporal
}

func TestComposeTouchpointServices(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	var built []string
	for name, s := range c.Services {
		if s.Build != nil {
			built = append(built, name)
		}
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(touchpointServices)), built,
		"the services built from this repository")

	pg := c.Services["postgres"].Environment
	namespaceJob := c.Services["temporal-namespace"].Environment
	for name, subcommand := range touchpointServices {
		t.Run(name, func(t *testing.T) {
			s := c.Services[name]
			assert.Nil(t, s.Entrypoint, "keeps the image's entrypoint, the touchpoint binary")
			if cmd := args(s.Command); assert.NotEmpty(t, cmd) {
				assert.Equal(t, subcommand, cmd[0], "the subcommand it runs")
			}
			for k := range s.Environment {
				assert.True(t, slices.Contains(config.Variables, k), "%s sets %s, which touchpoint does not read (config.Variables)", name, k)
			}
			cfg := loadConfig(t, s)

			// Required outside `touchpoint dev`, and from the user, not from this file.
			assert.Equal(t, testSecretKey, cfg.SecretKey)

			// PostgreSQL: the postgres service, its user, password and database.
			db, err := url.Parse(cfg.DatabaseURL)
			require.NoError(t, err)
			assert.Equal(t, "postgres:5432", db.Host)
			assert.Equal(t, pg["POSTGRES_USER"], db.User.Username())
			pass, _ := db.User.Password()
			assert.Equal(t, pg["POSTGRES_PASSWORD"], pass)
			assert.Equal(t, "/"+pg["POSTGRES_DB"], db.Path)

			// Temporal, through Temporal's own client settings: the temporal
			// service and the namespace the temporal-namespace job creates.
			temporal := temporalOf(t, cfg)
			assert.Equal(t, "temporal:7233", temporal.Address())
			assert.Equal(t, namespaceJob["TEMPORAL_NAMESPACE"], temporal.Namespace())
			assert.Equal(t, namespaceJob["TEMPORAL_ADDRESS"], temporal.Address())
			assert.False(t, temporal.TLS(), "plain text inside the compose network")

			// The public addresses a user's curl (and the token's iss and aud) use.
			assert.Equal(t, "http://localhost:8080", cfg.BaseURL)
			assert.Equal(t, "http://localhost:8081", cfg.AuthURL)

			if name == "worker" {
				from, err := mail.ParseAddress(cfg.MailFrom)
				require.NoError(t, err, "TOUCHPOINT_MAIL_FROM")
				assert.NotContains(t, from.Address, "localhost", "a sender receiving servers accept (the worker warns otherwise)")
			}
			if name == "worker" { // `touchpoint worker` refuses to start without SMTP
				smtp, err := url.Parse(cfg.SMTPURL)
				require.NoError(t, err, "TOUCHPOINT_SMTP_URL")
				assert.Equal(t, "mailpit:1025", smtp.Host)
				assert.Contains(t, s.DependsOn, "mailpit")
			}
		})
	}
}

func TestComposeSecretKeyComesFromTheUser(t *testing.T) {
	t.Parallel()
	for _, vars := range []map[string]string{{}, {"TOUCHPOINT_SECRET_KEY": ""}} {
		_, err := loadCompose(vars)
		require.Error(t, err, "docker compose must refuse to start without TOUCHPOINT_SECRET_KEY")
		assert.Contains(t, err.Error(), "set TOUCHPOINT_SECRET_KEY")
	}

	raw, err := loadCompose(nil) // not interpolated
	require.NoError(t, err)
	required := regexp.MustCompile(`^\$\{TOUCHPOINT_SECRET_KEY:\?.+\}$`)
	for name := range touchpointServices {
		assert.Regexp(t, required, raw.Services[name].Environment["TOUCHPOINT_SECRET_KEY"],
			"%s: the secret key must be required from the environment, never written here", name)
	}

	// Every image that is not built here is pinned to a version.
	for name, s := range raw.Services {
		if s.Build != nil {
			continue
		}
		_, tag, ok := strings.Cut(s.Image, ":")
		assert.True(t, ok && tag != "" && tag != "latest", "%s: image %q is not pinned to a version", name, s.Image)
	}
}

func TestComposePortsMatchURLsAndListenAddresses(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	entrypoint := dockerfileEntrypoint(t)

	for _, tc := range []struct {
		service string
		public  func(config.Config) string // the public URL
		listen  func(config.Config) string // the listen address
	}{
		{"api", func(c config.Config) string { return c.BaseURL }, func(c config.Config) string { return c.APIAddr }},
		{"auth", func(c config.Config) string { return c.AuthURL }, func(c config.Config) string { return c.AuthAddr }},
	} {
		t.Run(tc.service, func(t *testing.T) {
			s := c.Services[tc.service]
			cfg := loadConfig(t, s)
			host, listenPort, err := net.SplitHostPort(tc.listen(cfg))
			require.NoError(t, err)
			assert.Equal(t, "0.0.0.0", host, "must listen on every interface of the container")
			public, err := url.Parse(tc.public(cfg))
			require.NoError(t, err)
			assert.Contains(t, s.Ports, port{Published: public.Port(), Target: listenPort},
				"publishes the listen port on the port of its public URL %s", public)

			require.NotNil(t, s.Healthcheck, "needs a health check")
			test := args(s.Healthcheck.Test)
			require.Len(t, test, 4)
			assert.Equal(t, []string{"CMD", entrypoint, "healthcheck"}, test[:3],
				"the image has no shell: the binary checks itself")
			probe, err := url.Parse(test[3])
			require.NoError(t, err)
			assert.Equal(t, "127.0.0.1:"+listenPort, probe.Host)
			assert.Contains(t, []string{"/healthz", "/readyz"}, probe.Path)
		})
	}

	// Tools without authentication are for this machine only.
	assert.Equal(t, []port{{HostIP: "127.0.0.1", Published: "8233", Target: "8080"}}, c.Services["temporal-ui"].Ports, "Temporal Web UI")
	assert.Equal(t, []port{{HostIP: "127.0.0.1", Published: "8025", Target: "8025"}}, c.Services["mailpit"].Ports, "mail inbox")
	assert.Equal(t, []port{{HostIP: "127.0.0.1", Published: "9090", Target: "9090"}}, c.Services["prometheus"].Ports, "Prometheus")
	assert.Equal(t, []port{{HostIP: "127.0.0.1", Published: "7233", Target: "7233"}}, c.Services["temporal"].Ports, "Temporal gRPC")
	assert.Empty(t, c.Services["migrate"].Ports)
	assert.Empty(t, c.Services["worker"].Ports, "scales to any number of replicas")
}

// TestComposeMetricsAndWorkerHealth: the api serves metrics, the worker
// its /healthz, /readyz and /metrics, and the worker's health check asks
// its /readyz on the address it listens on.
func TestComposeMetricsAndWorkerHealth(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	entrypoint := dockerfileEntrypoint(t)

	api := loadConfig(t, c.Services["api"])
	host, _, err := net.SplitHostPort(api.MetricsAddr)
	require.NoError(t, err, "the api serves metrics (TOUCHPOINT_METRICS_ADDR)")
	assert.Equal(t, "0.0.0.0", host, "reachable by Prometheus in the network")

	worker := loadConfig(t, c.Services["worker"])
	host, workerPort, err := net.SplitHostPort(worker.WorkerAddr)
	require.NoError(t, err, "the worker's health and metrics listener (TOUCHPOINT_WORKER_ADDR)")
	assert.Equal(t, "0.0.0.0", host, "reachable by Prometheus in the network")
	require.NotNil(t, c.Services["worker"].Healthcheck, "the worker needs a health check")
	assert.Equal(t, []string{"CMD", entrypoint, "healthcheck", "http://127.0.0.1:" + workerPort + "/readyz"},
		args(c.Services["worker"].Healthcheck.Test))

	for _, name := range []string{"auth", "migrate"} {
		cfg := loadConfig(t, c.Services[name])
		assert.Empty(t, cfg.WorkerAddr, "%s runs no worker", name)
	}
}

func TestComposeStartOrder(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)

	assert.Equal(t, dependsOn{"postgres": "service_healthy", "temporal-namespace": "service_completed_successfully"}, c.Services["migrate"].DependsOn,
		"migrate registers search attributes in the namespace, so it waits for it")
	assert.Contains(t, []string{"", "no"}, c.Services["migrate"].Restart, "migrate runs once")
	// Temporal's schema before its server, its namespace before Touchpoint.
	assert.Equal(t, dependsOn{"postgres": "service_healthy"}, c.Services["temporal-schema"].DependsOn)
	assert.Equal(t, dependsOn{"temporal-schema": "service_completed_successfully"}, c.Services["temporal"].DependsOn)
	assert.Equal(t, dependsOn{"temporal": "service_healthy"}, c.Services["temporal-namespace"].DependsOn)
	for _, name := range []string{"auth", "api", "worker"} {
		assert.Equal(t, "service_completed_successfully", c.Services[name].DependsOn["migrate"],
			"%s starts after migrate has finished", name)
	}
	for name, s := range c.Services {
		for dep, cond := range s.DependsOn {
			require.Contains(t, c.Services, dep, "%s depends on an unknown service", name)
			if cond == "service_healthy" {
				assert.NotNil(t, c.Services[dep].Healthcheck, "%s waits for %s to be healthy, which has no health check", name, dep)
			}
		}
		switch name {
		case "migrate":
		case "temporal-schema", "temporal-namespace": // jobs that end, tried again when they fail
			assert.Regexp(t, `^on-failure(:\d+)?$`, s.Restart, "%s", name)
		default:
			assert.Contains(t, []string{"always", "unless-stopped", "on-failure"}, strings.Split(s.Restart, ":")[0],
				"%s runs for good and needs a restart policy", name)
		}
	}
	if hc := c.Services["postgres"].Healthcheck; assert.NotNil(t, hc) {
		assert.Contains(t, strings.Join(args(hc.Test), " "), "pg_isready")
	}
}

func TestComposePostgresAndTemporalShareCredentials(t *testing.T) {
	t.Parallel()
	vars := userVars()
	vars["POSTGRES_PASSWORD"] = "another-password"
	c, err := loadCompose(vars)
	require.NoError(t, err)

	pg := c.Services["postgres"].Environment
	assert.Equal(t, "another-password", pg["POSTGRES_PASSWORD"])
	temporal := c.Services["temporal"].Environment
	assert.Equal(t, "postgres12", temporal["DB"])
	assert.Equal(t, "postgres", temporal["POSTGRES_SEEDS"])
	assert.Equal(t, pg["POSTGRES_USER"], temporal["POSTGRES_USER"])
	assert.Equal(t, pg["POSTGRES_PASSWORD"], temporal["POSTGRES_PWD"])
	schemaJob := c.Services["temporal-schema"].Environment
	assert.Equal(t, "postgres12", schemaJob["SQL_PLUGIN"])
	assert.Equal(t, "postgres", schemaJob["SQL_HOST"])
	assert.Equal(t, pg["POSTGRES_USER"], schemaJob["SQL_USER"])
	assert.Equal(t, pg["POSTGRES_PASSWORD"], schemaJob["SQL_PASSWORD"])
	db, err := url.Parse(c.Services["migrate"].Environment["DATABASE_URL"])
	require.NoError(t, err)
	pass, _ := db.User.Password()
	assert.Equal(t, pg["POSTGRES_PASSWORD"], pass)
}

// TestComposeTemporalOnItsProductionPath: the Temporal server image with
// its schema set up by Temporal's admin tools of the same version, not the
// deprecated auto-setup image.
func TestComposeTemporalOnItsProductionPath(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	for name, s := range c.Services {
		assert.NotContains(t, s.Image, "auto-setup", "%s: temporalio/auto-setup is deprecated", name)
	}
	server, version, _ := strings.Cut(c.Services["temporal"].Image, ":")
	assert.Equal(t, "temporalio/server", server)
	for _, job := range []string{"temporal-schema", "temporal-namespace"} {
		assert.Equal(t, "temporalio/admin-tools:"+version, c.Services[job].Image, "%s: the tools of the server's version", job)
	}
	script := strings.Join(args(c.Services["temporal-schema"].Command), " ")
	for _, step := range []string{"temporal-sql-tool", "create", "setup-schema -v 0.0", "update-schema -d",
		"/etc/temporal/schema/postgresql/v12/", "$DBNAME", "$VISIBILITY_DBNAME"} {
		assert.Contains(t, script, step, "the schema job runs Temporal's documented steps")
	}
	assert.Contains(t, strings.Join(args(c.Services["temporal-namespace"].Command), " "), "temporal operator namespace create")
	// The schema job makes the databases the server uses.
	for _, name := range []string{"DBNAME", "VISIBILITY_DBNAME"} {
		assert.NotEmpty(t, c.Services["temporal"].Environment[name], name)
		assert.Equal(t, c.Services["temporal"].Environment[name], c.Services["temporal-schema"].Environment[name], name)
	}
}

// moduleVersion is the version go.mod requires of module.
func moduleVersion(t *testing.T, module string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+v(\S+)`).FindSubmatch(raw)
	require.NotNil(t, m, "go.mod requires %s", module)
	return string(m[1])
}

// TestComposeTemporalIsTheVersionOfDevAndTests: the images run the Temporal
// server and Web UI of the versions go.mod pins, which `touchpoint dev`
// and the tests run, so what is tested is what compose deploys.
func TestComposeTemporalIsTheVersionOfDevAndTests(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	server := moduleVersion(t, "go.temporal.io/server")
	assert.Equal(t, "temporalio/server:"+server, c.Services["temporal"].Image)
	for _, job := range []string{"temporal-schema", "temporal-namespace"} {
		assert.Equal(t, "temporalio/admin-tools:"+server, c.Services[job].Image, job)
	}
	assert.Equal(t, "temporalio/ui:"+moduleVersion(t, "github.com/temporalio/ui-server/v2"), c.Services["temporal-ui"].Image)
}

// TestComposePostgresHasConnectionsForEveryPool: Temporal's pools (one per
// service and database) and every touchpoint process's, with two more
// workers, fit PostgreSQL's max_connections.
func TestComposePostgresHasConnectionsForEveryPool(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	m := regexp.MustCompile(`max_connections=(\d+)`).FindStringSubmatch(strings.Join(args(c.Services["postgres"].Command), " "))
	require.NotNil(t, m, "postgres sets max_connections")
	maxConns, err := strconv.Atoi(m[1])
	require.NoError(t, err)

	temporal := c.Services["temporal"].Environment
	pools := 0
	for _, k := range []string{"SQL_MAX_CONNS", "SQL_VIS_MAX_CONNS"} {
		n, err := strconv.Atoi(temporal[k])
		require.NoError(t, err, "%s bounds Temporal's pools", k)
		pools += n
	}
	used := 4 * pools // frontend, history, matching, worker
	for name := range touchpointServices {
		used += loadConfig(t, c.Services[name]).DBMaxConns
	}
	used += 2 * loadConfig(t, c.Services["worker"]).DBMaxConns // --scale worker=3
	const reserved = 3                                         // superuser_reserved_connections
	assert.LessOrEqual(t, used, maxConns-reserved, "connections the stack may open")
}

func TestComposeAPIDiscoversTheIssuerInsideTheNetwork(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	api := loadConfig(t, c.Services["api"])
	authCfg := loadConfig(t, c.Services["auth"])
	_, authPort, err := net.SplitHostPort(authCfg.AuthAddr)
	require.NoError(t, err)

	assert.Equal(t, "http://auth:"+authPort, api.OIDCDiscoveryURL, "the auth service, by its service name and listen port")
	assert.Equal(t, authCfg.AuthURL, api.AuthURL, "the API expects the iss the issuer puts into tokens")
	// The built-in issuer is one the API accepts, and is then discovered at
	// TOUCHPOINT_OIDC_DISCOVERY_URL (the wiring of cmd/touchpoint, tested there).
	assert.Contains(t, api.OIDCIssuers, api.AuthURL, "the API accepts the built-in issuer's tokens")
}

// TestComposeConfigWithDockerCompose has Compose itself validate the file:
// Debian's docker-compose (1.29) and the docker compose plugin, whichever
// are installed. Without either, only this check is skipped (failed under
// CI=true); the others read the file themselves.
func TestComposeConfigWithDockerCompose(t *testing.T) {
	t.Parallel()
	var tools [][]string
	if path, err := exec.LookPath("docker-compose"); err == nil {
		tools = append(tools, []string{path})
	}
	if path, err := exec.LookPath("docker"); err == nil && exec.Command(path, "compose", "version").Run() == nil {
		tools = append(tools, []string{path, "compose"})
	}
	if len(tools) == 0 {
		withoutValidator(t, "neither docker-compose nor the docker compose plugin is installed (apt-get install docker-compose)")
	}
	// An empty env file, so that a developer's own .env plays no part.
	emptyEnv := filepath.Join(t.TempDir(), "empty.env")
	require.NoError(t, os.WriteFile(emptyEnv, nil, 0o600))
	for _, tool := range tools {
		t.Run(strings.Join(tool, " "), func(t *testing.T) {
			compose := func(secret string) (string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				argv := append(slices.Clone(tool[1:]), "--env-file", emptyEnv, "-f", "docker-compose.yml", "config", "-q")
				cmd := exec.CommandContext(ctx, tool[0], argv...)
				cmd.Dir = repoRoot
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
				if secret != "" {
					cmd.Env = append(cmd.Env, "TOUCHPOINT_SECRET_KEY="+secret)
				}
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			out, err := compose(testSecretKey)
			require.NoError(t, err, "%s config -q:\n%s", strings.Join(tool, " "), out)

			out, err = compose("")
			require.Error(t, err, "Compose must refuse the file without TOUCHPOINT_SECRET_KEY")
			assert.Contains(t, out, "set TOUCHPOINT_SECRET_KEY")
		})
	}
}
