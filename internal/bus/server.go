// Package bus is evosignal's NATS side: the embedded nats-server, client
// connections (auth, TLS), and provisioning of the JetStream stream, the
// ingester's durable consumer and the rules key-value bucket. It is the one
// place that knows subjects.
package bus

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerConfig configures the embedded nats-server.
type ServerConfig struct {
	// Listen is the client address, host:port. Port 0 picks a free port;
	// port -1 accepts no TCP clients (in-process connections only).
	Listen string
	// StoreDir is where JetStream keeps its file store.
	StoreDir string
	// MaxPayload is the largest message the server accepts (bytes); 0 keeps
	// the server's default (1 MiB), or the config file's.
	MaxPayload int32
	// ConfigFile, when set, is a nats-server configuration file read first:
	// users and their subject permissions (authorization, accounts), TLS,
	// limits. Listen and StoreDir replace the file's listen address and
	// JetStream store; JetStream is always on. docs/operations.md,
	// "Permissions", has a per-agent setup.
	ConfigFile string
}

// DefaultListen is the embedded server's default client address: loopback,
// the standard NATS port.
const DefaultListen = "127.0.0.1:4222"

// Validate reports every problem of the configuration at once.
func (c ServerConfig) Validate() error {
	var errs []error
	if c.StoreDir == "" {
		errs = append(errs, errors.New("embedded server: store directory is empty"))
	}
	if _, _, err := splitListen(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("embedded server: listen address %q: %w", c.Listen, err))
	}
	if c.MaxPayload < 0 {
		errs = append(errs, fmt.Errorf("embedded server: max payload %d is negative", c.MaxPayload))
	}
	return errors.Join(errs...)
}

func splitListen(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < -1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return host, port, nil
}

// Server is a running embedded nats-server with JetStream.
type Server struct {
	ns *server.Server
}

// StartServer starts an in-process nats-server with JetStream enabled and
// waits until it accepts connections. The logger receives the server's own
// log lines at Info level and above.
func StartServer(cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, _ := splitListen(cfg.Listen)
	opts := &server.Options{}
	if cfg.ConfigFile != "" {
		o, err := server.ProcessConfigFile(cfg.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("embedded nats-server: config file: %w", err)
		}
		opts = o
	}
	if opts.ServerName == "" {
		opts.ServerName = "evosignal-embedded"
	}
	opts.Host, opts.Port = host, port
	opts.JetStream = true
	opts.StoreDir = cfg.StoreDir
	if cfg.MaxPayload > 0 {
		opts.MaxPayload = cfg.MaxPayload
	}
	opts.NoSigs = true
	opts.DontListen = port == -1
	if port == 0 {
		opts.Port = server.RANDOM_PORT
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats-server: %w", err)
	}
	if log != nil {
		ns.SetLoggerV2(&slogAdapter{log: log.With("component", "nats-server")}, false, false, false)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats-server did not become ready on %s (store %s)", cfg.Listen, cfg.StoreDir)
	}
	return &Server{ns: ns}, nil
}

// ClientURL is the URL other processes use to reach the server.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// NATS returns the underlying server (for in-process connections).
func (s *Server) NATS() *server.Server { return s.ns }

// Close shuts the server down and waits until it has.
func (s *Server) Close() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// slogAdapter routes nats-server's logger into slog.
type slogAdapter struct{ log *slog.Logger }

func (a *slogAdapter) Noticef(format string, v ...any) { a.log.Info(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.log.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  {}
