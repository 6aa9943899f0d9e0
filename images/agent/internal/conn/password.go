package conn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// EnsurePassword makes the server accept t.User with t.Password and leaves
// the client targeting those credentials. A fresh FE has root without a
// password: if the desired password is refused, the empty one is tried and,
// when accepted, the password is set with SET PASSWORD. Running it again is a
// no-op. changed reports whether the password was set now.
//
// Errors never contain the password: server messages about SET PASSWORD are
// replaced by the error number, since a server may quote the statement.
func EnsurePassword(ctx context.Context, c *Client, t Target) (changed bool, err error) {
	if err := c.SetTarget(t); err != nil {
		return false, err
	}
	first := c.Ping(ctx)
	if first == nil || KindOf(first) != KindAuth {
		return false, first
	}
	empty := t
	empty.Password = ""
	if err := c.SetTarget(empty); err != nil {
		return false, err
	}
	if err := c.Ping(ctx); err != nil {
		_ = c.SetTarget(t)
		if KindOf(err) == KindAuth {
			return false, &Error{Kind: KindAuth, Op: "log in as " + t.User,
				Err: errors.New("neither the password from the credentials Secret nor the empty password is accepted")}
		}
		return false, err
	}
	setErr := c.Do(ctx, "set password of "+t.User, func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "SET PASSWORD = PASSWORD(?)", t.Password)
		return redact(err)
	})
	if err := c.SetTarget(t); err != nil {
		return false, err
	}
	if setErr != nil {
		return false, setErr
	}
	if err := c.Ping(ctx); err != nil {
		return true, fmt.Errorf("log in with the new password: %w", err)
	}
	return true, nil
}

func redact(err error) error {
	if err == nil {
		return nil
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return &mysql.MySQLError{Number: myErr.Number, SQLState: myErr.SQLState, Message: "statement refused (message withheld: it may quote the password)"}
	}
	return err
}
