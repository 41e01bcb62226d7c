package bridge

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/internal/adapter"
)

// adapterFlags puts the flags of every adapter on the command's flag set,
// each name once, and holds what the command line gives them until the
// adapter is known: apply then hands the selected adapter the values of its
// own flags and refuses the others.
type adapterFlags struct {
	adapters []adapter.Adapter
	own      map[string]*flag.FlagSet // each adapter's flags, by adapter name
	given    map[string]*given        // by flag name
}

// given is a flag of some adapters: what the command line set it to.
type given struct {
	def    string
	isBool bool
	values []string
}

func (g *given) String() string {
	if g == nil {
		return ""
	}
	return g.def
}

func (g *given) Set(v string) error {
	g.values = append(g.values, v)
	return nil
}

func (g *given) IsBoolFlag() bool { return g.isBool }

// declareAdapterFlags declares the flags of adapters on fs: the usage of
// the first adapter that declares a name, and which adapters take it when
// not all do.
func declareAdapterFlags(fs *flag.FlagSet, adapters []adapter.Adapter) *adapterFlags {
	af := &adapterFlags{adapters: adapters, own: map[string]*flag.FlagSet{}, given: map[string]*given{}}
	takers := map[string][]string{}
	var names []string
	first := map[string]*flag.Flag{}
	for _, a := range adapters {
		own := flag.NewFlagSet(a.Name(), flag.ContinueOnError)
		a.Flags(own)
		af.own[a.Name()] = own
		own.VisitAll(func(f *flag.Flag) {
			if first[f.Name] == nil {
				first[f.Name] = f
				names = append(names, f.Name)
			}
			takers[f.Name] = append(takers[f.Name], a.Name())
		})
	}
	for _, name := range names {
		f := first[name]
		bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
		g := &given{def: f.DefValue, isBool: isBool && bf.IsBoolFlag()}
		usage := f.Usage
		if len(takers[name]) < len(adapters) {
			usage += " (-agent " + strings.Join(takers[name], ", ") + ")"
		}
		fs.Var(g, name, usage)
		af.given[name] = g
	}
	return af
}

// apply hands a the values given to its flags, and refuses a flag of other
// adapters given with it.
func (af *adapterFlags) apply(a adapter.Adapter) error {
	own := af.own[a.Name()]
	var errs []error
	var names []string
	for name := range af.given {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		g := af.given[name]
		if len(g.values) == 0 {
			continue
		}
		if own.Lookup(name) == nil {
			errs = append(errs, fmt.Errorf("-%s does not apply to -agent %s (%s)", name, a.Name(), takes(own)))
			continue
		}
		for _, v := range g.values {
			if err := own.Set(name, v); err != nil {
				errs = append(errs, fmt.Errorf("invalid value %q for -%s: %v", v, name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// takes says which adapter flags own has.
func takes(own *flag.FlagSet) string {
	var names []string
	own.VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
	if len(names) == 0 {
		return "it takes no flags of its own"
	}
	return "it takes " + strings.Join(names, ", ")
}

// lookup returns the adapter name; an unknown or missing name is an error
// naming every known one.
func (af *adapterFlags) lookup(name string) (adapter.Adapter, error) {
	var known []string
	for _, a := range af.adapters {
		if a.Name() == name {
			return a, nil
		}
		known = append(known, a.Name())
	}
	if name == "" {
		return nil, fmt.Errorf("-agent is required: one of %s", strings.Join(known, ", "))
	}
	return nil, fmt.Errorf("-agent %q is not a known agent: one of %s", name, strings.Join(known, ", "))
}
