"""Small builders for the model trial (``pytest --model examples.models.<name>:build_model``, issue 40;
docs/model-trial.md): real architectures from transformers configs at hidden 64, two layers, random init, and
planted bugs of each kind the claims catch. Each is ``build_model(**overrides) -> nn.Module``, as a user writes one."""
