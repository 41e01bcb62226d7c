package pipeline

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
)

// The pages are behind the NATS server's users: when the server requires
// authentication, a page asks for HTTP Basic credentials and lets through
// whoever the server accepts with them, checked by connecting with them
// (a user and password; a token as the password with no user). An
// accepted pair is remembered for pagesAuthTTL.

const pagesAuthTTL = time.Minute

// pagesAuth guards the pages of a pipeline whose server requires
// authentication.
type pagesAuth struct {
	p *Pipeline

	mu sync.Mutex
	ok map[[32]byte]time.Time // accepted credentials (hashed) until then
}

func (a *pagesAuth) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, given := r.BasicAuth()
		if !given || !a.accepted(user, pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="evosignal", charset="UTF-8"`)
			http.Error(w, "the pages are behind the NATS server's users: sign in with a user and password it accepts (a token as the password, with no user)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// accepted reports whether the server accepts user and pass, connecting
// with them unless they were accepted within pagesAuthTTL.
func (a *pagesAuth) accepted(user, pass string) bool {
	if pass == "" {
		return false
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass))
	now := time.Now()
	a.mu.Lock()
	until, ok := a.ok[key]
	a.mu.Unlock()
	if ok && now.Before(until) {
		return true
	}
	conn := a.p.cfg.NATS
	conn.Name = "evosignal pages sign-in"
	conn.User, conn.Password, conn.Token, conn.CredsFile, conn.NKeyFile = "", "", "", "", ""
	if user != "" {
		conn.User, conn.Password = user, pass
	} else {
		conn.Token = pass
	}
	if srv := a.p.srv; srv != nil {
		// Over TCP where the embedded server listens: a refused
		// in-process connection stalls (below).
		if srv.NATS().Addr() != nil {
			conn.URL = srv.ClientURL()
		} else {
			conn.InProcess = srv.NATS()
		}
	}
	// A refused in-process connection takes 10 s to say so (nats.go's
	// pipe); an accepted one answers at once, so 2 s without an answer is
	// a refusal (the connection, when it comes, is closed).
	done := make(chan bool, 1)
	go func() {
		nc, err := bus.Connect(conn, nil)
		if err == nil {
			nc.Close()
		}
		done <- err == nil
	}()
	var accepted bool
	select {
	case accepted = <-done:
	case <-time.After(2 * time.Second):
	}
	if !accepted {
		return false
	}
	a.mu.Lock()
	if a.ok == nil || len(a.ok) > 1000 {
		a.ok = map[[32]byte]time.Time{}
	}
	a.ok[key] = now.Add(pagesAuthTTL)
	a.mu.Unlock()
	return true
}
