-- Lets a statement of several writes refuse to commit unless a condition holds. A statement that
-- claims a row and writes what follows from the claim selects corridor_expect(<the claim
-- matched>, ...): when it did not, the statement fails as a whole, none of its writes stay, and
-- SQLSTATE CR001 tells the caller that this was the refusal and not a fault.
create function corridor_expect(ok boolean, message text) returns boolean
language plpgsql as $$
begin
  if not ok then
    raise exception '%', message using errcode = 'CR001';
  end if;
  return true;
end $$;
