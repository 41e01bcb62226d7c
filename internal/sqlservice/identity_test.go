package sqlservice

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestServiceNamesItsDatabase: the service's metadata and every answer name
// the database it serves; a client that hears answers from two databases on
// one subject (two ingesters sharing it) says so.
func TestServiceNamesItsDatabase(t *testing.T) {
	stA, stB := sampleStore(t, 0), sampleStore(t, 0)
	idA, err := stA.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	idB, err := stB.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	srv, nc, _ := testkit.Embedded(t)
	startService(t, nc, stA.DB(), nil)
	cnc, _ := testkit.Client(t, srv.ClientURL())

	m, err := cnc.Request("$SRV.INFO."+ServiceName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info micro.Info
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Metadata["database"] != idA {
		t.Fatalf("service metadata %v, want database %s", info.Metadata, idA)
	}
	c := NewClient(cnc, "")
	if _, err := c.Query(t.Context(), Request{SQL: "SELECT 1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(t.Context(), Request{SQL: "SELECT nope"}); !errors.Is(err, ErrSQL) {
		t.Fatalf("bad query: %v, want ErrSQL", err)
	}
	if c.Database() != idA {
		t.Fatalf("client heard database %q, want %s", c.Database(), idA)
	}

	// A second service on the same subject, over another database: the
	// queue group spreads the queries over both.
	snc, _ := testkit.Client(t, srv.ClientURL())
	startService(t, snc, stB.DB(), nil)
	for i := 0; ; i++ {
		_, err := c.Query(t.Context(), Request{SQL: "SELECT 1"})
		if err == nil {
			if i == 200 {
				t.Fatal("200 answers, all from the first database: the second service never answered")
			}
			continue
		}
		if !errors.Is(err, ErrTwoDatabases) {
			t.Fatalf("query %d: %v, want ErrTwoDatabases", i, err)
		}
		for _, want := range []string{idA, idB, "-query-subject"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
		break
	}
}
