package bus

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
)

// ConnConfig says how to reach a NATS server or cluster.
type ConnConfig struct {
	URL       string // one or more URLs, comma-separated
	Name      string // connection name shown in server monitoring
	User      string
	Password  string
	Token     string
	CredsFile string // JWT/NKey credentials file
	NKeyFile  string // NKey seed file
	TLSCert   string // client certificate (with TLSKey) for mutual TLS
	TLSKey    string
	TLSCA     string // CA bundle to verify the server

	// InProcess, when set, connects to an embedded server without TCP
	// (URL is then ignored).
	InProcess nats.InProcessConnProvider
}

// Validate reports every problem of the configuration at once.
func (c ConnConfig) Validate() error {
	var errs []error
	if c.URL == "" && c.InProcess == nil {
		errs = append(errs, errors.New("nats: no server URL"))
	}
	if (c.User == "") != (c.Password == "") {
		errs = append(errs, errors.New("nats: user and password go together"))
	}
	auth := 0
	for _, set := range []bool{c.User != "", c.Token != "", c.CredsFile != "", c.NKeyFile != ""} {
		if set {
			auth++
		}
	}
	if auth > 1 {
		errs = append(errs, errors.New("nats: choose one of user/password, token, creds file, nkey file"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("nats: TLS certificate and key go together"))
	}
	return errors.Join(errs...)
}

// Connect opens a connection that reconnects forever (JetStream state lives
// on the server, so a client outlives a server restart) and logs connection
// changes.
func Connect(cfg ConnConfig, log *slog.Logger) (*nats.Conn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.ReconnectBufSize(32 << 20),
	}
	if log != nil {
		opts = append(opts,
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					log.Warn("nats disconnected", "err", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted()) }),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Warn("nats async error", "err", err) }),
		)
	}
	switch {
	case cfg.User != "":
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	case cfg.Token != "":
		opts = append(opts, nats.Token(cfg.Token))
	case cfg.CredsFile != "":
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	case cfg.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(cfg.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats: nkey file %s: %w", cfg.NKeyFile, err)
		}
		opts = append(opts, o)
	}
	if cfg.TLSCert != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	url := cfg.URL
	if cfg.InProcess != nil {
		opts = append(opts, nats.InProcessServer(cfg.InProcess))
		url = "in-process"
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to nats %s: %w", url, err)
	}
	return nc, nil
}
