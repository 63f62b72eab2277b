-- Up Migration
-- The profile sections of docs/memory.md#profile. user_id is a UUID here because users.id is one.
CREATE TABLE agent_memory_profiles (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  agents_content TEXT,
  soul_content TEXT,
  identity_content TEXT,
  user_content TEXT,
  tools_content TEXT,
  memory_content TEXT,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  updated_at TIMESTAMPTZ DEFAULT NOW(),
  CONSTRAINT unique_user_profile UNIQUE (user_id)
);

-- Down Migration
DROP TABLE agent_memory_profiles;
