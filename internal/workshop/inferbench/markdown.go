package inferbench

import (
	"fmt"
	"io"
)

// WriteMarkdown writes rep as Markdown tables: the chosen rule, every grid
// rule on the tuning set, and the chosen rule per scenario on the report
// set.
func WriteMarkdown(w io.Writer, rep Report) error {
	pw := &printer{w: w}
	pw.printf("Chosen rule: **%s** (highest F1 on the tuning set; ties go to the simpler rule).\n\n", rep.RuleName)
	pw.printf("### Per scenario, report seeds\n\n")
	pw.printf("| scenario | held out | sessions | explicit replans | inferred | inferred ÷ explicit | TP | FP | FN | precision | recall |\n")
	pw.printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range append(rep.PerScenario, rep.Total) {
		held := ""
		if r.HeldOut {
			held = "yes"
		}
		if r.Name == rep.Total.Name {
			held = "—"
		}
		s := r.Score
		ratio := "—"
		if s.Replans > 0 {
			ratio = fmt.Sprintf("%.2f", float64(s.Inferred)/float64(s.Replans))
		}
		pw.printf("| %s | %s | %d | %d | %d | %s | %d | %d | %d | %.3f | %.3f |\n", r.Name, held, s.Sessions, s.Replans, s.Inferred, ratio, s.TP, s.FP, s.FN, s.Precision(), s.Recall())
	}
	pw.printf("\n### Tuning: every grid rule on the tuning set\n\n")
	pw.printf("| rule | inferred | TP | FP | FN | precision | recall | F1 |\n")
	pw.printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rep.Grid {
		s := r.Score
		pw.printf("| %s | %d | %d | %d | %d | %.3f | %.3f | %.3f |\n", r.Name, s.Inferred, s.TP, s.FP, s.FN, s.Precision(), s.Recall(), s.F1())
	}
	return pw.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}
