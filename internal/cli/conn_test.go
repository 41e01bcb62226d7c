package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/bus"
)

// The NATS_* variables configure a connection as the nats CLI reads them;
// flags override them; secrets come from files as well as argv.
func TestConnFlagsEnv(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte("s3cret\n"), 0o600)
	tokFile := filepath.Join(dir, "tok")
	os.WriteFile(tokFile, []byte("t0ken\n"), 0o600)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want bus.ConnConfig
	}{
		{"nothing", nil, nil, bus.ConnConfig{}},
		{"user and password", map[string]string{EnvUser: "bob", EnvPassword: "pw"}, nil, bus.ConnConfig{User: "bob", Password: "pw"}},
		{"user alone is a token", map[string]string{EnvUser: "tok"}, nil, bus.ConnConfig{Token: "tok"}},
		{"creds, nkey, tls", map[string]string{EnvCreds: "a.creds", EnvCert: "c.pem", EnvKey: "k.pem", EnvCA: "ca.pem"}, nil,
			bus.ConnConfig{CredsFile: "a.creds", TLSCert: "c.pem", TLSKey: "k.pem", TLSCA: "ca.pem"}},
		{"nkey", map[string]string{EnvNKey: "u.nk"}, nil, bus.ConnConfig{NKeyFile: "u.nk"}},
		{"-creds overrides the user of the environment", map[string]string{EnvUser: "bob", EnvPassword: "pw"}, []string{"-creds", "b.creds"},
			bus.ConnConfig{CredsFile: "b.creds"}},
		{"-user takes the password of the environment", map[string]string{EnvUser: "bob", EnvPassword: "pw", EnvCreds: "a.creds"}, []string{"-user", "ann"},
			bus.ConnConfig{User: "ann", Password: "pw"}},
		{"-password-file", map[string]string{EnvCreds: "a.creds"}, []string{"-user", "ann", "-password-file", pwFile},
			bus.ConnConfig{User: "ann", Password: "s3cret"}},
		{"-token-file", map[string]string{EnvUser: "bob", EnvPassword: "pw"}, []string{"-token-file", tokFile},
			bus.ConnConfig{Token: "t0ken"}},
		{"-tls-ca overrides NATS_CA alone", map[string]string{EnvCert: "c.pem", EnvKey: "k.pem", EnvCA: "ca.pem"}, []string{"-tls-ca", "other.pem"},
			bus.ConnConfig{TLSCert: "c.pem", TLSKey: "k.pem", TLSCA: "other.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{EnvUser, EnvPassword, EnvCreds, EnvNKey, EnvCert, EnvKey, EnvCA} {
				t.Setenv(k, tt.env[k])
			}
			var got bus.ConnConfig
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			ConnFlags(fs, &got)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("ConnFlags(env %v, %q) = %+v, want %+v", tt.env, tt.args, got, tt.want)
			}
		})
	}
}

// The help never prints the environment's secrets as defaults.
func TestConnFlagsHelpHidesSecrets(t *testing.T) {
	t.Setenv(EnvUser, "bob")
	t.Setenv(EnvPassword, "hunter2")
	t.Setenv(EnvCreds, "")
	var c bus.ConnConfig
	var b bytes.Buffer
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(&b)
	ConnFlags(fs, &c)
	fs.PrintDefaults()
	if strings.Contains(b.String(), "hunter2") {
		t.Fatalf("help shows the password:\n%s", b.String())
	}
	if !strings.Contains(b.String(), `(default bob)`) {
		t.Fatalf("help does not show the user of the environment:\n%s", b.String())
	}
}

func TestSecretFileMissing(t *testing.T) {
	var c bus.ConnConfig
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ConnFlags(fs, &c)
	if err := fs.Parse([]string{"-password-file", filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Fatal("-password-file of a missing file parsed, want an error")
	}
}

func TestReadFileStdin(t *testing.T) {
	got, err := ReadFile("-", strings.NewReader("SELECT 1"))
	if err != nil || string(got) != "SELECT 1" {
		t.Fatalf("ReadFile(-) = %q, %v, want the standard input", got, err)
	}
}
