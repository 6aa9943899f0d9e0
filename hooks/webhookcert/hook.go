// Package webhookcert keeps the serving certificate of the module's admission
// webhook in values (managedStarrocks.internal.webhookCert) with module-sdk's
// tls-certificate common hook: a self-signed CA and a certificate for the
// webhook Service, reused from the Secret the templates render from these
// values (templates/webhook/secret.yaml) and renewed before they expire.
package webhookcert

import (
	tlscert "github.com/deckhouse/module-sdk/common-hooks/tls-certificate"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// Names the templates use for the webhook Service and its TLS Secret.
const (
	ServiceName   = "managed-starrocks-webhook"
	TLSSecretName = "managed-starrocks-webhook-tls"
	ValuesPath    = shared.ValuesPrefix + ".internal.webhookCert"
)

// Conf is the tls-certificate hook configuration.
var Conf = tlscert.GenSelfSignedTLSHookConf{
	CN:            ServiceName,
	Namespace:     shared.ModuleNamespace,
	TLSSecretName: TLSSecretName,
	// The apiserver dials the Service by its svc name; the cluster-domain
	// form is there for clients that resolve the FQDN.
	SANs: tlscert.DefaultSANs([]string{
		ServiceName,
		ServiceName + "." + shared.ModuleNamespace,
		ServiceName + "." + shared.ModuleNamespace + ".svc",
		"%CLUSTER_DOMAIN%://" + ServiceName + "." + shared.ModuleNamespace + ".svc",
	}),
	FullValuesPathPrefix: ValuesPath,
}

var _ = tlscert.RegisterInternalTLSHookEM(Conf)
