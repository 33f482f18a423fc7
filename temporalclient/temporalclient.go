// Package temporalclient builds Touchpoint's Temporal client from
// Temporal's own environment configuration (go.temporal.io/sdk/contrib/envconfig),
// the settings every Temporal tool reads: a profile of a temporal.toml
// file, overridden by TEMPORAL_* variables. So a self-hosted cluster with
// mutual TLS and Temporal Cloud (mTLS or API key) need no Touchpoint-only
// settings:
//
//	TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
//	TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA, TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA,
//	TEMPORAL_TLS_SERVER_CA_CERT_PATH / _DATA, TEMPORAL_TLS_SERVER_NAME,
//	TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, TEMPORAL_CLIENT_AUTHORITY,
//	TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE (default: temporal.toml in the
//	user's config directory, e.g. ~/.config/temporalio/temporal.toml)
//
// Where nothing is set, the client dials 127.0.0.1:7233, namespace
// "default" (`touchpoint dev`). As in Touchpoint's own configuration, an
// empty variable counts as unset. gRPC headers (grpc_meta) are read from
// the file only, and a codec endpoint is ignored: a worker must never send
// payloads to a remote codec.
//
// Dial and NewLazy make clients whose errors explain a failed TLS handshake
// in the terms of these variables.
package temporalclient

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/touchpoint/touchpoint/internal/settings"
)

// Defaults where neither a profile nor the environment names them.
const (
	DefaultAddress   = "127.0.0.1:7233"
	DefaultNamespace = "default"
)

// Variables names every environment variable Load reads, for
// documentation and for checking deployment files against it.
var Variables = []string{
	"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_TLS",
	"TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_CERT_DATA",
	"TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_CLIENT_KEY_DATA",
	"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_DATA",
	"TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION",
	"TEMPORAL_CLIENT_AUTHORITY", "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE",
}

// Settings is what the Temporal client hands the configuration: its
// variables, checked as Load reads them (a temporal.toml profile too).
// The client logs its values itself, where it is made, with its secrets
// masked.
func Settings() settings.Section {
	vars := make([]settings.Var, len(Variables))
	for i, name := range Variables {
		vars[i] = settings.Var{Name: name, Secret: name == "TEMPORAL_API_KEY" || name == "TEMPORAL_TLS_CLIENT_KEY_DATA"}
	}
	return settings.Section{Name: "temporal", Vars: vars, Unlogged: true, Check: func(get func(string) string) error {
		_, err := Load(get)
		return err
	}}
}

// Config is a loaded client profile. Its zero value is not usable: use
// Load. It logs (slog) with its secrets masked.
type Config struct {
	profile envconfig.ClientConfigProfile
	// file is the temporal.toml read, "" when there was none.
	file string
	// profileName is the profile used from file.
	profileName string
}

// Load reads the configuration through getenv (os.Getenv in production):
// the profile TEMPORAL_PROFILE (default "default") of the file
// TEMPORAL_CONFIG_FILE (default: the user's temporal.toml; a missing file
// is no error), then the TEMPORAL_* variables over it. It checks that the
// TLS settings make a client: unreadable or mismatched certificate files
// stop the process at start, not at the first call.
func Load(getenv func(string) string) (Config, error) {
	env := envLookup(getenv)
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{EnvLookup: env})
	if err != nil {
		return Config{}, fmt.Errorf("temporal client config: %w", err)
	}
	if prof.Address == "" {
		prof.Address = DefaultAddress
	}
	if prof.Namespace == "" {
		prof.Namespace = DefaultNamespace
	}
	c := Config{profile: prof, profileName: strings.TrimSpace(getenv("TEMPORAL_PROFILE"))}
	if c.profileName == "" {
		c.profileName = envconfig.DefaultConfigFileProfile
	}
	c.file = strings.TrimSpace(getenv("TEMPORAL_CONFIG_FILE"))
	if c.file == "" {
		c.file = envconfig.DefaultConfigFilePath()
	}
	if _, err := os.Stat(c.file); c.file != "" && err != nil {
		c.file = ""
	}
	if _, err := c.ClientOptions(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Plain is the configuration of a plain-text client of address and
// namespace, read from nowhere: no profile file and no TEMPORAL_*
// variable applies. It is for a server the process runs or started itself
// (the embedded server of `touchpoint dev`), which a user's profile for
// their cluster must not reach.
func Plain(address, namespace string) Config {
	return Config{profile: envconfig.ClientConfigProfile{Address: address, Namespace: namespace}}
}

// Address is the frontend's host:port.
func (c Config) Address() string { return c.profile.Address }

// Namespace is the namespace the client works in.
func (c Config) Namespace() string { return c.profile.Namespace }

// TLS reports whether the client connects over TLS.
func (c Config) TLS() bool {
	if c.profile.TLS != nil {
		return !c.profile.TLS.Disabled
	}
	return c.profile.APIKey != "" // an API key turns TLS on by default
}

// ClientOptions are the SDK options of this profile: address, namespace,
// TLS, API key, gRPC headers. The caller adds its logger, metrics handler,
// interceptors and data converter before passing them to Dial or NewLazy.
func (c Config) ClientOptions() (client.Options, error) {
	opts, err := c.profile.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client config: %w", err)
	}
	return opts, nil
}

// LogValue describes the configuration without its secrets: the API key
// and any inline key are never shown, only whether they are set.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("address", c.profile.Address),
		slog.String("namespace", c.profile.Namespace),
		slog.Bool("tls", c.TLS()),
		slog.Bool("api_key", c.profile.APIKey != ""),
	}
	if c.file != "" {
		attrs = append(attrs, slog.String("config_file", c.file), slog.String("profile", c.profileName))
	}
	if t := c.profile.TLS; t != nil && !t.Disabled {
		attrs = append(attrs,
			slog.String("client_cert", source(t.ClientCertPath, t.ClientCertData)),
			slog.Bool("client_key", t.ClientKeyPath != "" || len(t.ClientKeyData) > 0),
			slog.String("server_ca", source(t.ServerCACertPath, t.ServerCACertData)))
		if t.ServerName != "" {
			attrs = append(attrs, slog.String("server_name", t.ServerName))
		}
		if t.DisableHostVerification {
			attrs = append(attrs, slog.Bool("host_verification", false))
		}
	}
	if c.profile.Authority != "" {
		attrs = append(attrs, slog.String("authority", c.profile.Authority))
	}
	if len(c.profile.GRPCMeta) > 0 {
		keys := make([]string, 0, len(c.profile.GRPCMeta))
		for k := range c.profile.GRPCMeta {
			keys = append(keys, k) // values may be credentials
		}
		attrs = append(attrs, slog.Any("grpc_meta_keys", keys))
	}
	return slog.GroupValue(attrs...)
}

// source says where a certificate comes from without its contents.
func source(path string, data []byte) string {
	switch {
	case path != "":
		return path
	case len(data) > 0:
		return "inline"
	default:
		return ""
	}
}

// Dial connects and checks the server (the SDK asks for its capabilities),
// so a wrong address, a TLS mistake or a missing credential fails here,
// with an error that says which setting to fix.
func Dial(ctx context.Context, opts client.Options) (client.Client, error) {
	c, err := client.DialContext(ctx, explaining(opts))
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal: %w", err)
	}
	return c, nil
}

// NewLazy makes a client that connects on first use, so a process starts
// while Temporal is down. Its calls fail with the same explained errors
// as Dial.
func NewLazy(opts client.Options) (client.Client, error) {
	c, err := client.NewLazyClient(explaining(opts))
	if err != nil {
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	return c, nil
}

// envLookup adapts getenv to envconfig: an empty variable is unset, as
// everywhere else in Touchpoint's configuration (compose files pass
// `VAR: ${VAR:-}`). Environ is empty, so TEMPORAL_GRPC_META_* variables are
// not read.
type envLookup func(string) string

func (e envLookup) Environ() []string { return nil }

func (e envLookup) LookupEnv(key string) (string, bool) {
	v := strings.TrimSpace(e(key))
	return v, v != ""
}
