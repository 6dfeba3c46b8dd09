"""Delegation token calls (get_delegation_token, renew_delegation_token, cancel_delegation_token):
issued only to callers who logged in with Kerberos, as Hive does; used over SASL DIGEST-MD5
(adapter/security/sasl.py)."""

from __future__ import annotations

from adapter import identity
from adapter.security.sasl import short_name
from store.hms.access import DelegationTokens
from thrift_idl.hive_metastore.ttypes import MetaException


class DelegationTokenHandler:
    def __init__(self, tokens: DelegationTokens):
        self.tokens = tokens

    def get_delegation_token(self, token_owner, renewer_kerberos_principal_name):
        caller = identity.current()
        if caller.mechanism != "kerberos":
            raise MetaException("Delegation tokens are issued only to callers authenticated with Kerberos "
                                f"(this caller: {caller.mechanism or 'not authenticated'}; serve --auth kerberos)")
        owner = token_owner or caller.user or ""
        if owner not in (caller.user, caller.principal):
            raise MetaException(f"{caller.principal} may not get a delegation token for {owner} "
                                "(impersonation is not supported)")
        renewer = short_name(renewer_kerberos_principal_name or "")
        return self.tokens.issue(short_name(owner), renewer, "")

    def renew_delegation_token(self, token_str_form):
        return self.tokens.renew(token_str_form or "", _caller_name())

    def cancel_delegation_token(self, token_str_form):
        self.tokens.cancel(token_str_form or "", _caller_name())


def _caller_name() -> str:
    caller = identity.current()
    if not caller.authenticated or not caller.user:
        raise MetaException("renewing or cancelling a delegation token needs an authenticated caller")
    return caller.user
