package testkit

import (
	"context"
	"database/sql"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // to ask PostgreSQL whether it is up
)

// The servers a lake beyond one machine runs on, as separate processes: a
// PostgreSQL server (its Iceberg catalog; Debian's postgresql package,
// scripts/setup) and an S3 server (versitygw over a directory; built with
// go install when it is not installed, like nats-server).

// VersityGWVersion is the S3 server the lake tests run.
const VersityGWVersion = "v1.8.0"

var (
	vgwOnce sync.Once
	vgwPath string
	vgwErr  error
)

// VersityGWBinary returns the path of a versitygw of VersityGWVersion:
// from PATH or GOPATH/bin, else built with go install into the user cache.
func VersityGWBinary(tb testing.TB) string {
	tb.Helper()
	vgwOnce.Do(func() {
		vgwPath, vgwErr = findOrInstall("versitygw", "github.com/versity/versitygw/cmd/versitygw", VersityGWVersion)
	})
	if vgwErr != nil {
		tb.Fatalf("versitygw %s: %v", VersityGWVersion, vgwErr)
	}
	return vgwPath
}

// findOrInstall finds the command name built from pkg's module at version
// (its build info says), or builds it with go install into the user cache.
func findOrInstall(name, pkg, version string) (string, error) {
	var candidates []string
	if p, err := exec.LookPath(name); err == nil {
		candidates = append(candidates, p)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		candidates = append(candidates, filepath.Join(strings.TrimSpace(string(out)), "bin", name))
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "evosignal", name+"-"+version)
	candidates = append(candidates, filepath.Join(dir, name))
	for _, c := range candidates {
		if bi, err := buildinfo.ReadFile(c); err == nil && bi.Path == pkg && bi.Main.Version == version {
			return c, nil
		}
	}
	cmd := exec.Command("go", "install", pkg+"@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install: %v\n%s", err, out)
	}
	return filepath.Join(dir, name), nil
}

// S3Server is versitygw serving the directories under Dir as buckets.
type S3Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Dir       string // the bucket directories
}

// StartS3 starts versitygw on a free loopback port with a bucket of the
// given name; it is stopped when the test ends.
func StartS3(tb testing.TB, bucket string) *S3Server {
	tb.Helper()
	s := &S3Server{AccessKey: "evosignal", SecretKey: "evosignal-secret", Dir: tb.TempDir()}
	if err := os.Mkdir(filepath.Join(s.Dir, bucket), 0o755); err != nil {
		tb.Fatal(err)
	}
	port := FreePort(tb)
	s.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
	cmd := exec.Command(VersityGWBinary(tb), "--port", fmt.Sprintf("127.0.0.1:%d", port),
		"--access", s.AccessKey, "--secret", s.SecretKey, "posix", s.Dir)
	startChild(tb, "versitygw", cmd, func() error {
		resp, err := http.Get(s.Endpoint)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil // any answer (403 unsigned) is a server that listens
	})
	return s
}

// Env is the environment an evosignal process needs to reach the server
// (AWS's variables, which internal/lake reads).
func (s *S3Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=us-east-1",
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
	}
}

// SetEnv sets Env in this process for the rest of the test.
func (s *S3Server) SetEnv(tb testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		tb.Setenv(k, v)
	}
}

// StartPostgres starts a PostgreSQL server of its own (initdb into a new
// directory, trust authentication, loopback only, no fsync) on a free
// port and returns its URI, postgres://evo@127.0.0.1:PORT/postgres; it is
// stopped and its directory removed when the test ends. As root it runs
// as the postgres user Debian's package creates (PostgreSQL refuses root).
func StartPostgres(tb testing.TB) string {
	tb.Helper()
	bin, err := postgresBin()
	if err != nil {
		tb.Fatalf("PostgreSQL: %v (scripts/setup installs Debian's postgresql)", err)
	}
	dir, err := os.MkdirTemp("", "evosignal-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("PostgreSQL refuses to run as root, and there is no postgres user to run it as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "evo", "--auth=trust", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	port := FreePort(tb)
	uri := fmt.Sprintf("postgres://evo@127.0.0.1:%d/postgres?sslmode=disable", port)
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	startChild(tb, "postgres", cmd, func() error {
		db, err := sql.Open("pgx", uri)
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return db.PingContext(ctx)
	})
	return uri
}

// postgresBin is the directory of PostgreSQL's server binaries: of
// initdb on PATH, else Debian's newest /usr/lib/postgresql/N/bin.
func postgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Dir(p), nil
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(ms) == 0 {
		return "", errors.New("no initdb on PATH nor in /usr/lib/postgresql/*/bin")
	}
	return filepath.Dir(ms[len(ms)-1]), nil
}

// startChild starts a server process, stopped (SIGINT, then SIGKILL) when
// the test ends, and waits until ready returns nil.
func startChild(tb testing.TB, name string, cmd *exec.Cmd, ready func() error) {
	tb.Helper()
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if testing.Verbose() {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ready()
		if err == nil {
			return
		}
		select {
		case <-done:
			tb.Fatalf("%s exited before it was ready: %v\n%s", name, cmd.ProcessState, out.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s not ready after 30 s: %v\n%s", name, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
