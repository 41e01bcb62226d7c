package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Parse parses args into fs as fs.Parse does, with what every command
// shares: -version prints the build (Version) to stdout, and a flag error
// is told in two lines (a one-line usage, then the error last, where the
// eye lands) rather than above the full list of flags, which -h prints.
//
// fs is named by the command's own name ("analyze replans"); the usage
// line and -version name it as the user runs it under ctx (Cmd), while an
// error is prefixed by the command's own first word, as all its errors are.
//
// It returns flag.ErrHelp after -h or -version, when the command has
// nothing more to do; any other error means the command line is wrong and
// has been reported on fs.Output(). A nil stdout is the process's
// (os.Stdout), for the parse functions that are given stderr alone.
func Parse(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if stdout == nil {
		stdout = os.Stdout
	}
	var version bool
	if fs.Lookup("version") == nil {
		fs.BoolVar(&version, "version", false, "print the version and build of this command and exit")
	}
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		if usage != nil {
			usage()
		} else {
			fmt.Fprintf(out, "Usage of %s:\n", Cmd(ctx, fs.Name()))
			fs.PrintDefaults()
		}
		return flag.ErrHelp
	case err != nil:
		ShortUsage(ctx, fs, err)
		return err
	case version:
		fmt.Fprintln(stdout, Version(Cmd(ctx, fs.Name())))
		return flag.ErrHelp
	}
	return nil
}

// ShortUsage reports err, a problem with the command line of fs, after a
// one-line usage that says where the help is, named as the user runs the
// command under ctx.
func ShortUsage(ctx context.Context, fs *flag.FlagSet, err error) {
	name := Cmd(ctx, fs.Name())
	fmt.Fprintf(fs.Output(), "usage: %s [flags]  (run '%s -h' for the flags)\n%s: %v\n",
		name, name, firstWord(fs.Name()), err)
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}
