package skilllite

import (
	"bufio"
	"slices"
	"strings"
	"testing"
)

func TestLineReaderSkipsLongLines(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 100) + "\r\n" + strings.Repeat("y", 40) + "\nlast"
	// A 16-byte buffer makes bufio hand the long lines over in fragments.
	lr := &lineReader{r: bufio.NewReaderSize(strings.NewReader(in), 16), max: 50}
	var got []string
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			break
		}
		if tooLong {
			got = append(got, "<too long>")
			continue
		}
		got = append(got, string(line))
	}
	if want := []string{"short", "<too long>", strings.Repeat("y", 40), "last"}; !slices.Equal(got, want) {
		t.Fatalf("lines = %q, want %q", got, want)
	}
}
