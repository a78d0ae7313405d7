package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/store"
)

// errStoreDamaged makes `store check` exit 1 after its report.
var errStoreDamaged = errors.New("the store is damaged")

func storeCommand() *ffcli.Command {
	return &ffcli.Command{
		Name:       "store",
		ShortUsage: "edgefence store check|repair [--data-dir DIR]",
		ShortHelp:  "check or repair the retained-state store (with the broker stopped)",
		LongHelp: "check opens the data dir's store read-only, runs bbolt's consistency check, reads every\n" +
			"record, and exits 1 if anything is damaged. repair copies every readable record into a\n" +
			"fresh file, moves the damaged one aside (edgefence.db.damaged-<time>, never deleted) and\n" +
			"puts the fresh one in its place; a store that checks clean is left alone.",
		Subcommands: []*ffcli.Command{
			storeSubcommand("check", "check the store, changing nothing; exit 1 if damaged", func(dir string, w io.Writer) error {
				r, err := store.Check(dir)
				if err != nil {
					return err
				}
				r.Print(w)
				if r.Damaged() {
					fmt.Fprintf(w, "stop the broker and run `edgefence store repair --data-dir %s` to copy the readable records into a fresh file; the damaged one is kept\n", dir)
					return errStoreDamaged
				}
				return nil
			}),
			storeSubcommand("repair", "copy the readable records of a damaged store into a fresh one", func(dir string, w io.Writer) error {
				r, err := store.Repair(dir, slog.New(slog.NewTextHandler(w, nil)))
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
		Exec: func(context.Context, []string) error { return flag.ErrHelp },
	}
}

func storeSubcommand(name, help string, run func(dir string, w io.Writer) error) *ffcli.Command {
	fs := flag.NewFlagSet("edgefence store "+name, flag.ContinueOnError)
	dir := fs.String("data-dir", broker.DefaultConfig().DataDir, "the broker's data dir")
	return &ffcli.Command{
		Name:       name,
		ShortUsage: "edgefence store " + name + " [--data-dir DIR]",
		ShortHelp:  help,
		FlagSet:    fs,
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("store %s: unexpected argument %q", name, args[0])
			}
			return run(*dir, os.Stdout)
		},
	}
}
