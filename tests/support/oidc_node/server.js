// oidc-provider (the OpenID-certified Node implementation) with its default settings, for the
// sign-in tests: its own login and consent pages (devInteractions: any login, any password), and
// id_tokens that carry no scope-requested claims when an access token is issued, as the standard
// has it (OpenID Connect Core 5.4): `email` and `email_verified` come from the userinfo endpoint.
// The login is the e-mail; one that starts with "unverified." has `email_verified` false.
//
//   node server.js <port> <client_id> <client_secret> <redirect_uri>
import Provider from 'oidc-provider';

const [port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
  }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: id.replace(/^unverified\./, ''), email_verified: !id.startsWith('unverified.') };
      },
    };
  },
});
provider.proxy = true;
provider.listen(Number(port), '127.0.0.1', () => console.log(`listening on ${issuer}`));
