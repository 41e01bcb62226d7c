// Package cli holds what the commands share about running in a terminal.
package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// NewLogger returns the logger a command's -log-level and -log-format flags
// ask for: level debug, info, warn or error; format text or json.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: %w", level, err)
	}
	hopts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", format)
}

// LogFlags binds -log-level and -log-format; NewLogger reads them.
func LogFlags(fs *flag.FlagSet, level, format *string, defaultLevel string) {
	fs.StringVar(level, "log-level", defaultLevel, "log level: debug, info, warn, error")
	fs.StringVar(format, "log-format", "text", "log format: text or json")
}
