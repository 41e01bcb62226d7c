package cli

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/internal/bus"
)

// The environment variables the nats CLI (natscli) and the NATS ecosystem's
// tools read: where the server is, how to authenticate and TLS.
const (
	EnvURL      = "NATS_URL"
	EnvUser     = "NATS_USER" // alone (without NATS_PASSWORD) a token, as in the nats CLI
	EnvPassword = "NATS_PASSWORD"
	EnvCreds    = "NATS_CREDS"
	EnvNKey     = "NATS_NKEY"
	EnvCert     = "NATS_CERT"
	EnvKey      = "NATS_KEY"
	EnvCA       = "NATS_CA"
)

// URLFromEnv is the NATS server URL of the environment (NATS_URL), the
// default of a command's -nats flag where -nats names the server to
// connect to.
func URLFromEnv() string { return os.Getenv(EnvURL) }

// ConnFlags binds the NATS authentication and TLS flags to c: -user,
// -password, -password-file, -token, -token-file, -creds, -nkey, -tls-cert,
// -tls-key, -tls-ca. Their defaults come from the environment as the nats
// CLI reads it: NATS_USER and NATS_PASSWORD (NATS_USER alone is a token),
// NATS_CREDS, NATS_NKEY, NATS_CERT, NATS_KEY, NATS_CA. Flags override the
// environment: any authentication flag replaces every authentication
// setting of the environment, and each TLS flag its variable.
//
// A secret never has to be on the command line, where ps shows it: give it
// in NATS_PASSWORD, or in a file with -password-file or -token-file.
func ConnFlags(fs *flag.FlagSet, c *bus.ConnConfig) {
	user, pass := os.Getenv(EnvUser), os.Getenv(EnvPassword)
	if user != "" && pass == "" {
		c.Token = user
	} else {
		c.User, c.Password = user, pass
	}
	c.CredsFile, c.NKeyFile = os.Getenv(EnvCreds), os.Getenv(EnvNKey)
	c.TLSCert, c.TLSKey, c.TLSCA = os.Getenv(EnvCert), os.Getenv(EnvKey), os.Getenv(EnvCA)

	a := &authFlags{kinds: [][]*string{{&c.User, &c.Password}, {&c.Token}, {&c.CredsFile}, {&c.NKeyFile}}, set: map[*string]bool{}}
	fs.Var(a.value(&c.User, false, false), "user", "NATS user (with -password; default $NATS_USER)")
	fs.Var(a.value(&c.Password, true, false), "password", "NATS password: visible in ps, prefer $NATS_PASSWORD or -password-file")
	fs.Var(a.value(&c.Password, true, true), "password-file", "read the NATS password from this `file`")
	fs.Var(a.value(&c.Token, true, false), "token", "NATS auth token: visible in ps, prefer -token-file or $NATS_USER alone")
	fs.Var(a.value(&c.Token, true, true), "token-file", "read the NATS auth token from this `file`")
	fs.Var(a.value(&c.CredsFile, false, false), "creds", "NATS credentials `file` (JWT + NKey; default $NATS_CREDS)")
	fs.Var(a.value(&c.NKeyFile, false, false), "nkey", "NATS NKey seed `file` (default $NATS_NKEY)")
	fs.Var(&plainFlag{p: &c.TLSCert}, "tls-cert", "client certificate `file` for TLS (with -tls-key; default $NATS_CERT)")
	fs.Var(&plainFlag{p: &c.TLSKey}, "tls-key", "client key `file` for TLS (default $NATS_KEY)")
	fs.Var(&plainFlag{p: &c.TLSCA}, "tls-ca", "CA `file` to verify the NATS server (default $NATS_CA)")
}

// authFlags are the authentication flags of one ConnFlags, by kind
// (user and password, token, creds, nkey): a flag of one kind set on the
// command line clears what the environment gave for the other kinds, so
// that -creds overrides NATS_USER, while -user still takes NATS_PASSWORD.
type authFlags struct {
	kinds [][]*string
	set   map[*string]bool // set on the command line
}

func (a *authFlags) value(p *string, secret, file bool) flag.Value {
	return &authFlag{a: a, p: p, secret: secret, file: file}
}

// override clears the environment's settings of every kind but p's.
func (a *authFlags) override(p *string) {
	a.set[p] = true
	for _, kind := range a.kinds {
		if slices.Contains(kind, p) {
			continue
		}
		for _, q := range kind {
			if !a.set[q] {
				*q = ""
			}
		}
	}
}

// authFlag is one authentication flag. A secret's value never shows in the
// help (it would print the environment's password as a default); a file
// flag reads the value from the file it names.
type authFlag struct {
	a            *authFlags
	p            *string
	secret, file bool
}

func (f *authFlag) String() string {
	if f == nil || f.p == nil || f.secret {
		return ""
	}
	return *f.p
}

func (f *authFlag) Set(s string) error {
	v := s
	if f.file {
		b, err := os.ReadFile(s)
		if err != nil {
			return fmt.Errorf("read secret: %w", err)
		}
		v = strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return fmt.Errorf("secret file %s is empty", s)
		}
	}
	f.a.override(f.p)
	*f.p = v
	return nil
}

// plainFlag is a string flag whose default was set from the environment.
type plainFlag struct{ p *string }

func (f *plainFlag) String() string {
	if f == nil || f.p == nil {
		return ""
	}
	return *f.p
}

func (f *plainFlag) Set(s string) error { *f.p = s; return nil }
