// A real OpenID Connect provider on loopback, for the sign-in browser test and for trying
// sign-in by hand: `node tests/oidc/provider.mjs --port 9400 --redirect http://localhost:8501/oauth2callback`.
//
// One static client (`incidentiq`, secret `incidentiq-test-secret`), the people below, and
// oidc-provider's development login form (any password). It prints one line,
// `listening <issuer>`, once it accepts connections. Nothing here is fit for production.
import Provider from 'oidc-provider';

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
}

const port = Number(option('port', '9400'));
const redirect = option('redirect', 'http://localhost:8501/oauth2callback');
const issuer = `http://127.0.0.1:${port}`;

// who may sign in: the `roles` claim is what INCIDENTIQ_ROLES_CLAIM reads
const PEOPLE = {
  ann: { email: 'ann@example.com', name: 'Ann Reviewer', roles: ['reviewer'] },
  bob: { email: 'bob@example.com', name: 'Bob Reviewer', roles: ['reviewer'] },
  vic: { email: 'vic@example.com', name: 'Vic Viewer', roles: ['viewer'] },
  ada: { email: 'ada@example.com', name: 'Ada Admin', roles: ['admin'] },
};

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'incidentiq',
    client_secret: 'incidentiq-test-secret',
    redirect_uris: [redirect],
    post_logout_redirect_uris: [redirect],
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username', 'roles'],
  },
  // Streamlit reads the person from the ID token (Authlib's `userinfo`), not the userinfo endpoint
  conformIdTokenClaims: false,
  async findAccount(ctx, sub) {
    const person = PEOPLE[sub];
    if (!person) return undefined;
    return {
      accountId: sub,
      async claims() {
        return { sub, preferred_username: sub, email_verified: true, ...person };
      },
    };
  },
  // the test client is trusted: grant what it asks for, so there is no consent page to click
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile');
    grant.addOIDCClaims(['email', 'email_verified', 'name', 'preferred_username', 'roles']);
    await grant.save();
    return grant;
  },
  cookies: { keys: ['incidentiq-test-only-cookie-key'] },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
});

const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`listening ${issuer}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
