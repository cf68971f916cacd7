-- An agent's held execution of a wallet-funded quote keeps the owner's signature over the
-- quote's payloadToSign, so that the platform's approval can execute it. The signature only
-- authorizes that one quote, and only while the session that made it is active.
alter table agent_actions add column wallet_signature text;
