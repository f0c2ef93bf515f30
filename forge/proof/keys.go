package proof

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
)

// Key files are PEM, in the standard encodings that OpenSSL and Go's
// crypto/x509 read and write: a private key is a PKCS #8 "PRIVATE KEY"
// block, a public key a PKIX "PUBLIC KEY" block. (`openssl pkey -in KEY
// -pubout` derives the same public key file.)

// GenerateKey returns a new ed25519 private key, drawing randomness from
// rand (crypto/rand.Reader if nil).
func GenerateKey(rand io.Reader) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	return priv, err
}

// EncodePrivateKey returns the PEM file of a private key.
func EncodePrivateKey(key ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// EncodePublicKey returns the PEM file of a public key.
func EncodePublicKey(key ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePrivateKey reads a PEM private key file holding an ed25519 key.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	der, err := pemBlock(data, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("bad private key: %v", err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the private key is a %T, not an ed25519 key", k)
	}
	return key, nil
}

// ParsePublicKey reads a PEM public key file holding an ed25519 key.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	der, err := pemBlock(data, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("bad public key: %v", err)
	}
	key, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the public key is a %T, not an ed25519 key", k)
	}
	return key, nil
}

func pemBlock(data []byte, typ string) ([]byte, error) {
	b, rest := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("not a PEM file (want a %q block)", typ)
	}
	if b.Type != typ {
		return nil, fmt.Errorf("PEM block is %q, want %q", b.Type, typ)
	}
	if len(b.Headers) != 0 {
		return nil, errors.New("PEM block has headers (encrypted keys are not supported)")
	}
	if more, _ := pem.Decode(rest); more != nil {
		return nil, errors.New("more than one PEM block")
	}
	return b.Bytes, nil
}

// WriteKeyPair writes a key's private half to path (mode 0600) and its
// public half to path+".pub" (mode 0644). Unless overwrite is set, it
// refuses to replace either file: losing a signing key by accident cannot
// be undone.
func WriteKeyPair(path string, key ed25519.PrivateKey, overwrite bool) error {
	priv, err := EncodePrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := EncodePublicKey(key.Public().(ed25519.PublicKey))
	if err != nil {
		return err
	}
	if !overwrite {
		for _, p := range []string{path, path + ".pub"} {
			if _, err := os.Lstat(p); err == nil {
				return fmt.Errorf("%s already exists", p)
			}
		}
	}
	if err := writeKeyFile(path, priv, 0o600, overwrite); err != nil {
		return err
	}
	if err := writeKeyFile(path+".pub", pub, 0o644, overwrite); err != nil {
		if !overwrite {
			os.Remove(path)
		}
		return err
	}
	return nil
}

// writeKeyFile creates path with the given contents; unless overwrite is
// set, path must not exist. An existing file is replaced by a new one
// (removed first), so a private key never inherits a wider mode.
func writeKeyFile(path string, data []byte, mode os.FileMode, overwrite bool) error {
	if overwrite {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists", path)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
