package devtemporal

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"

	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"go.temporal.io/server/common/rpc/encryption"
)

// TLS serves the frontend over TLS, the way a production cluster does, so
// clients can be tested against it. Only the frontend speaks TLS: the
// services inside the process keep talking to each other in plain text.
type TLS struct {
	// Certificate is the frontend's certificate (leaf first, then any
	// intermediates) with its private key.
	Certificate tls.Certificate
	// ClientCAs, when set, makes the frontend require a client certificate
	// issued by one of them (mutual TLS); nil accepts clients without one.
	ClientCAs *x509.CertPool
}

// frontendTLS holds what the server's own clients need to reach a TLS
// frontend: the system worker, the readiness check and the Web UI.
type frontendTLS struct {
	server *tls.Config
	// client trusts the frontend's certificate and, under mutual TLS,
	// presents a certificate the frontend accepts.
	client *tls.Config
	// ui is client as the Web UI takes it (base64 PEM).
	ui uiconfig.TLS
}

// newFrontendTLS builds the frontend's TLS settings. The server's own
// clients trust the frontend's certificate itself (a certificate in the
// root pool verifies as its own chain), so no CA has to be named. Under
// mutual TLS they present a certificate from a CA made here in memory and
// added to the accepted client CAs: its key never leaves the process, so it
// lets no one else in.
func newFrontendTLS(t *TLS, dialHost string) (*frontendTLS, error) {
	if len(t.Certificate.Certificate) == 0 || t.Certificate.PrivateKey == nil {
		return nil, errors.New("TLS: certificate and private key are required")
	}
	chain := make([]*x509.Certificate, 0, len(t.Certificate.Certificate))
	roots := x509.NewCertPool()
	var chainPEM []byte
	for _, der := range t.Certificate.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("TLS: parse certificate: %w", err)
		}
		chain = append(chain, c)
		roots.AddCert(c)
		chainPEM = append(chainPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	serverName, err := nameToVerify(chain[0], dialHost)
	if err != nil {
		return nil, err
	}

	f := &frontendTLS{
		server: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{t.Certificate}},
		client: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots, ServerName: serverName},
		ui: uiconfig.TLS{
			CaData:                 base64.StdEncoding.EncodeToString(chainPEM),
			ServerName:             serverName,
			EnableHostVerification: true,
		},
	}
	if t.ClientCAs != nil {
		ca, cert, certPEM, keyPEM, err := internalClientCert()
		if err != nil {
			return nil, fmt.Errorf("TLS: internal client certificate: %w", err)
		}
		accepted := t.ClientCAs.Clone()
		accepted.AddCert(ca)
		f.server.ClientCAs = accepted
		f.server.ClientAuth = tls.RequireAndVerifyClientCert
		f.client.Certificates = []tls.Certificate{cert}
		f.ui.CertData = base64.StdEncoding.EncodeToString(certPEM)
		f.ui.KeyData = base64.StdEncoding.EncodeToString(keyPEM)
	}
	return f, nil
}

// provider hands the settings to Temporal: TLS for the frontend's server
// side and for every client of it inside the process.
func (f *frontendTLS) provider(frontendHost string) encryption.TLSConfigProvider {
	return &encryption.FixedTLSConfigProvider{
		FrontendServerConfig: f.server,
		FrontendClientConfig: f.client,
		// The cluster's own RPC address counts as a "remote" cluster for
		// some frontend-to-frontend calls.
		RemoteClusterClientConfigs: map[string]*tls.Config{frontendHost: f.client},
	}
}

// nameToVerify is the name the server's own clients check the frontend's
// certificate against: the host they dial when the certificate covers it,
// else the certificate's first name.
func nameToVerify(leaf *x509.Certificate, dialHost string) (string, error) {
	if leaf.VerifyHostname(dialHost) == nil {
		return dialHost, nil
	}
	if len(leaf.DNSNames) > 0 {
		return leaf.DNSNames[0], nil
	}
	if len(leaf.IPAddresses) > 0 {
		return leaf.IPAddresses[0].String(), nil
	}
	return "", errors.New("TLS: the certificate names no host (no DNS or IP subject alternative name)")
}

// internalClientCert makes a throwaway CA and a client certificate it
// signed, for the server's own connections to its frontend.
func internalClientCert() (ca *x509.Certificate, cert tls.Certificate, certPEM, keyPEM []byte, err error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "devtemporal internal CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "devtemporal internal client"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, cert, nil, nil, err
	}
	return ca, cert, certPEM, keyPEM, nil
}
