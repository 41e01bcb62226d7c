package web

import (
	"bytes"
	"context"
	"html/template"
	"net/http"

	"github.com/evosignal/evosignal/internal/report"
)

// overviewPage is the overview: the filter and the report's headline and
// curve for it.
type overviewPage struct {
	Frame
	Filter   filter
	Dims     []options
	Headline string
	Sub      string
	Report   *report.Report
	Figures  template.HTML // report.WriteLive: the figures and the curve
}

// dimLimit bounds the values a filter select offers.
const dimLimit = 200

// dims are the filter's choices (web/dimensions.sql, a scan of every
// session), computed once a data version (the page's).
func (s *Server) dims(ctx context.Context, version string) (map[string][]string, error) {
	v, err := s.cache.get("dims", version, func() (any, error) {
		t, err := s.lookup(ctx, "dimensions", params{"limit": int64(dimLimit)})
		if err != nil {
			return nil, err
		}
		out := map[string][]string{}
		t.each(func(r row) { out[r.str("dim")] = append(out[r.str("dim")], r.str("value")) })
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string][]string), nil
}

func (s *Server) overview(ctx context.Context, r *http.Request, buf *bytes.Buffer) error {
	// The version first: a batch committed while the page is built makes
	// the next poll fetch it again rather than miss it.
	version, err := s.dataVersion(ctx)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), s.cfg.Now())
	if err != nil {
		return err
	}
	cfg := f.report()
	cfg.Taxonomy = s.cfg.Taxonomy
	rep, err := report.Overview(ctx, s.src(), cfg, s.cfg.Now())
	if err != nil {
		return err
	}
	var live bytes.Buffer
	if err := report.WriteLive(&live, rep); err != nil {
		return err
	}
	dims, err := s.dims(ctx, version)
	if err != nil {
		return err
	}
	p := overviewPage{Frame: s.frame("evosignal", "overview"), Filter: f, Dims: dimOptions(dims, f), Report: rep,
		Figures: template.HTML(live.String())} // the report's own template output, escaped there
	s.live(&p.Frame, version)
	p.Headline = rep.Headline.Text
	if rep.Headline.Sessions.Current > 0 {
		p.Headline = rep.Headline.Story(0)
		if len(rep.Headline.Metrics) > 1 {
			p.Sub = rep.Headline.Story(1)
		}
	}
	return render(buf, "overview", p)
}
