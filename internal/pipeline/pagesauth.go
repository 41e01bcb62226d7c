package pipeline

import (
	"github.com/evosignal/evosignal/internal/bus"
)

// pagesSignIn puts the pages of a pipeline whose server requires
// authentication behind its users (bus.SignIn), connecting where the
// ingester does: over TCP where the embedded server listens (a refused
// in-process connection stalls), else in process.
func (p *Pipeline) pagesSignIn() *bus.SignIn {
	conn := p.cfg.NATS
	if srv := p.srv; srv != nil {
		if srv.NATS().Addr() != nil {
			conn.URL = srv.ClientURL()
		} else {
			conn.InProcess = srv.NATS()
		}
	}
	return &bus.SignIn{Conn: conn}
}
