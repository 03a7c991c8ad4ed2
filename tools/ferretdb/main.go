// Command ferretdb-local runs FerretDB v1 (the MongoDB wire protocol on SQLite)
// for tests and local runs. It embeds the library package instead of
// `go install`-ing the FerretDB command, whose module zip lacks the version
// file it checks at start-up (FerretDB#2982). See shared/LOCAL-DB.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on (port 0 picks a free one)")
	dir := flag.String("sqlite-dir", "", "directory holding the SQLite databases (created if missing)")
	pgURL := flag.String("postgresql-url", "", "use the PostgreSQL handler with this URL instead of SQLite")
	flag.Parse()

	// Never reach the internet, whatever the library's defaults become.
	os.Setenv("FERRETDB_TELEMETRY", "disable")
	os.Setenv("DO_NOT_TRACK", "1")

	cfg := &ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: *listen}}
	sqliteDir := ""
	if *pgURL != "" {
		cfg.Handler = "postgresql"
		cfg.PostgreSQLURL = *pgURL
	} else {
		if *dir == "" {
			fail("-sqlite-dir or -postgresql-url is required")
		}
		abs, err := filepath.Abs(*dir)
		if err != nil {
			fail(err.Error())
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			fail(err.Error())
		}
		cfg.Handler = "sqlite"
		// WAL with synchronous=NORMAL: a commit survives the process being killed
		// (kill -9), not a power cut; no fsync per write, which made every write
		// wait on the disk. The local database is for development and tests;
		// production uses MongoDB.
		cfg.SQLiteURL = "file:" + abs + "/?_pragma=synchronous(normal)"
		sqliteDir = abs
	}

	db, err := ferretdb.New(cfg)
	if err != nil {
		fail(err.Error())
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- db.Run(ctx) }()
	if sqliteDir != "" {
		go keepIDIndexes(ctx, sqliteDir, 200*time.Millisecond)
	}

	// The parent process reads this one line to learn the address; the
	// listener is bound once MongoDBURI() answers with a real port.
	fmt.Printf("READY %s\n", db.MongoDBURI())

	if err := <-done; err != nil && ctx.Err() == nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "ferretdb-local:", msg)
	os.Exit(1)
}
