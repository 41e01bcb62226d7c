package bus

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"
)

// SignIn puts HTTP handlers (the live pages) behind a NATS server's users:
// a request passes with HTTP Basic credentials the server accepts, checked
// by connecting with them (a user and password; a token as the password
// with no user). An accepted pair is remembered for SignInTTL, and at most
// 1,000 pairs are.
type SignIn struct {
	// Conn is where to connect to check a pair: its URL (or InProcess) and
	// TLS settings; its own credentials are never used.
	Conn ConnConfig

	mu sync.Mutex
	ok map[[32]byte]time.Time // accepted pairs (hashed) until then
}

// SignInTTL is how long an accepted pair passes without connecting again.
const SignInTTL = time.Minute

// signInWait bounds a check: a refused in-process connection takes 10 s to
// say so (nats.go's pipe) where an accepted one answers at once, so a
// check without an answer by then is a refusal.
const signInWait = 2 * time.Second

// Wrap returns h behind the server's users.
func (a *SignIn) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, given := r.BasicAuth()
		if !given || !a.Accepted(user, pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="evosignal", charset="UTF-8"`)
			http.Error(w, "the pages are behind the NATS server's users: sign in with a user and password it accepts (a token as the password, with no user)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Accepted reports whether the server accepts user and pass, connecting
// with them unless they were accepted within SignInTTL.
func (a *SignIn) Accepted(user, pass string) bool {
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
	conn := a.Conn
	conn.Name = "evosignal pages sign-in"
	conn.User, conn.Password, conn.Token, conn.CredsFile, conn.NKeyFile = "", "", "", "", ""
	if user != "" {
		conn.User, conn.Password = user, pass
	} else {
		conn.Token = pass
	}
	done := make(chan bool, 1)
	go func() {
		nc, err := Connect(conn, nil)
		if err == nil {
			nc.Close()
		}
		done <- err == nil
	}()
	var accepted bool
	select {
	case accepted = <-done:
	case <-time.After(signInWait):
	}
	if !accepted {
		return false
	}
	a.mu.Lock()
	if a.ok == nil || len(a.ok) > 1000 {
		a.ok = map[[32]byte]time.Time{}
	}
	a.ok[key] = now.Add(SignInTTL)
	a.mu.Unlock()
	return true
}
