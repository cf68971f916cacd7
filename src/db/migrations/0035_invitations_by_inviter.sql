-- Deleting a customer cancels its pending invitations: found by inviter, not by scanning the
-- platform's invitations.
create index invitations_inviter on invitations (inviter_customer_id) where status = 'PENDING';
