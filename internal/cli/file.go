package cli

import (
	"io"
	"os"
)

// ReadFile reads the file a flag names, or stdin for "-": every flag that
// reads a whole file (a query, a taxonomy) takes - as its file.
func ReadFile(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}
