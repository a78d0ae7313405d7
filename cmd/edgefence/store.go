package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/store"
)

// errStoreDamaged makes `store check` exit 1 after its report.
var errStoreDamaged = errors.New("the store is damaged")

func storeCommand() *ffcli.Command {
	c := &ffcli.Command{
		Name:       "store",
		ShortUsage: "edgefence store check|repair [--data-dir DIR]",
		ShortHelp:  "check or repair the retained-state store (with the broker stopped)",
		LongHelp: "check opens the data dir's store read-only, checks bbolt's two meta pages, runs bbolt's\n" +
			"consistency check, reads every record, judges the server's transitions by the engine's\n" +
			"stamp bounds (--max-clock-offset, --min-valid-time), and exits 1 if anything is wrong.\n" +
			"repair copies every readable, plausible record (with a meta page invalid: of the valid\n" +
			"page's commit) into a fresh file, moves the damaged one aside (edgefence.db.damaged-<time>,\n" +
			"never deleted) and puts the fresh one in its place; a store that checks clean is left alone.",
		Subcommands: []*ffcli.Command{
			storeSubcommand("check", "check the store, changing nothing; exit 1 if damaged", func(dir string, verify store.Verify, w io.Writer) error {
				r, err := store.Check(dir, verify)
				if err != nil {
					return err
				}
				r.Print(w)
				if r.Damaged() {
					fmt.Fprintf(w, "stop the broker and run `edgefence store repair --data-dir %s` to copy the readable, plausible records into a fresh file; the damaged one is kept (docs/runbook.md)\n", dir)
					return errStoreDamaged
				}
				return nil
			}),
			storeSubcommand("repair", "copy the readable records of a damaged store into a fresh one", func(dir string, verify store.Verify, w io.Writer) error {
				r, err := store.Repair(dir, verify, slog.New(slog.NewTextHandler(w, nil)))
				if err != nil {
					return err
				}
				r.Print(w)
				if r.Aside == "" {
					fmt.Fprintln(w, "nothing to repair")
				} else {
					fmt.Fprintf(w, "repaired: %d records in %s; the damaged file is kept at %s\n", r.Records, r.Path, r.Aside)
				}
				return nil
			}),
		},
	}
	c.Exec = func(_ context.Context, args []string) error {
		if len(args) > 0 {
			return cmdhelp.UsageError{Cmd: "edgefence store", Err: cmdhelp.Unknown(c.Subcommands, args[0])}
		}
		return flag.ErrHelp
	}
	return c
}

func storeSubcommand(name, help string, run func(dir string, verify store.Verify, w io.Writer) error) *ffcli.Command {
	fs := flag.NewFlagSet("edgefence store "+name, flag.ContinueOnError)
	dir := fs.String("data-dir", broker.DefaultConfig().DataDir, "the broker's data dir")
	e := engine.DefaultConfig()
	fs.DurationVar(&e.MaxClockOffset, "max-clock-offset", e.MaxClockOffset, "as serve's: a transition stamped further ahead of now is implausible")
	fs.Var(flagvalue.Time{P: &e.MinValidTime}, "min-valid-time", "as serve's: a transition stamped before this is implausible (RFC 3339)")
	return &ffcli.Command{
		Name:       name,
		ShortUsage: "edgefence store " + name + " [--data-dir DIR]",
		ShortHelp:  help,
		FlagSet:    fs,
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence store "+name, args)
			}
			return run(*dir, plausible(e.Clamper()), os.Stdout)
		},
	}
}

// plausible judges the server's stored transitions as restore does, by
// the engine's stamp bounds c.
func plausible(c clock.Clamper) store.Verify {
	return func(topic string, payload []byte) error { return output.CheckStored(topic, payload, c, time.Now()) }
}
