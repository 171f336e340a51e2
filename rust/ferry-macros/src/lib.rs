//! Procedural macros of the `ferry` crate: `#[derive(ferry::Object)]` and `#[ferry::export]`.
//!
//! Written on `proc_macro` alone (no `syn`/`quote`), so the derive adds nothing to build times;
//! it accepts what a Ferry type is: a struct with named fields, no generics.
use proc_macro::{Delimiter, Spacing, TokenStream, TokenTree};

/// Mirrors a Rust struct as a Ferry type registered at run time (what Python's `py_class`
/// does): `#[derive(ferry::Object)] #[ferry(type_key = "demo.Point")] struct Point { x: i64,
/// y: f64 }`, then `ferry::register_type::<Point>()?`. C++ reflection, `make_node`, JSON and
/// structural equality then see `demo.Point` like any other type. Every field type implements
/// `Clone`, `ferry::IntoAny`, `ferry::FromAny` and `ferry::FieldType`. A field may carry
/// `#[ferry(default = EXPR)]` or `#[ferry(default_factory = EXPR)]` (a `fn() -> FieldType`):
/// the default an object made without that field takes (`ferry::Object::field_defaults`).
#[proc_macro_derive(Object, attributes(ferry))]
pub fn derive_object(input: TokenStream) -> TokenStream {
    match expand(input) {
        Ok(code) => code.parse().expect("the derive generates valid Rust"),
        Err(message) => format!("::core::compile_error!({message:?});")
            .parse()
            .unwrap(),
    }
}

struct Field {
    name: String,
    ty: String,
    /// `#[ferry(default = EXPR)]` (false, EXPR) or `#[ferry(default_factory = EXPR)]` (true).
    default: Option<(bool, String)>,
}

fn expand(input: TokenStream) -> Result<String, String> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut type_key = None;
    let mut i = 0;
    // Outer attributes (ours: #[ferry(type_key = "...")]) and the visibility.
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1) {
                    if let Some(key) = ferry_attribute(g.stream())? {
                        type_key = Some(key);
                    }
                }
                i += 2;
            }
            TokenTree::Ident(id) if id.to_string() == "pub" => {
                i += 1;
                if let Some(TokenTree::Group(g)) = tokens.get(i) {
                    if g.delimiter() == Delimiter::Parenthesis {
                        i += 1;
                    }
                }
            }
            _ => break,
        }
    }
    match tokens.get(i) {
        Some(TokenTree::Ident(id)) if id.to_string() == "struct" => {}
        _ => return Err("#[derive(ferry::Object)] is for structs with named fields".into()),
    }
    let name = match tokens.get(i + 1) {
        Some(TokenTree::Ident(id)) => id.to_string(),
        _ => return Err("#[derive(ferry::Object)]: expected the struct's name".into()),
    };
    let body = match tokens.get(i + 2) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.stream(),
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => {
            return Err(format!(
                "#[derive(ferry::Object)]: {name} has generic parameters; a Ferry type has none"
            ))
        }
        _ => {
            return Err(format!(
                "#[derive(ferry::Object)]: {name} must have named fields"
            ))
        }
    };
    let type_key = type_key.ok_or_else(|| {
        format!("#[derive(ferry::Object)]: {name} needs #[ferry(type_key = \"...\")]")
    })?;
    let fields = parse_fields(body)?;

    let mut specs = String::new();
    let mut values = String::new();
    let mut reads = String::new();
    let mut names = String::new();
    let mut defaults = String::new();
    for (k, f) in fields.iter().enumerate() {
        // `n` the Rust identifier (`r#type`), `key` the field's name in Ferry (`type`).
        let (n, t) = (&f.name, &f.ty);
        let key = n.strip_prefix("r#").unwrap_or(n);
        specs += &format!(
            "::ferry::FieldDef {{ name: {key:?}, type_text: <{t} as ::ferry::FieldType>::type_text() }},"
        );
        values += &format!("::ferry::IntoAny::into_any(::core::clone::Clone::clone(&self.{n})),");
        reads += &format!("{n}: fields.read::<{t}>({k}, {key:?})?,");
        names += &format!("{key:?},");
        match &f.default {
            Some((false, e)) => {
                defaults += &format!("({key:?}, ::ferry::FieldDefault::value::<{t}>({e})),")
            }
            Some((true, e)) => {
                defaults += &format!("({key:?}, ::ferry::FieldDefault::factory::<{t}>({e})),")
            }
            None => {}
        }
    }
    let defaults = if defaults.is_empty() {
        String::new()
    } else {
        format!(
            "fn field_defaults() -> ::std::vec::Vec<(&'static str, ::ferry::FieldDefault)> {{
        ::std::vec![{defaults}]
    }}"
        )
    };
    Ok(format!(
        r#"
impl ::ferry::Object for {name} {{
    const TYPE_KEY: &'static str = {type_key:?};
    fn fields() -> ::std::vec::Vec<::ferry::FieldDef> {{
        ::std::vec![{specs}]
    }}
    fn field_values(&self) -> ::std::vec::Vec<::ferry::Any> {{
        ::std::vec![{values}]
    }}
    fn to_object(&self) -> ::ferry::Result<::ferry::ObjectRef> {{
        static INDEX: ::ferry::TypeIndexCache = ::ferry::TypeIndexCache::new();
        let index = INDEX.get::<Self>()?;
        ::ferry::create_object(index, &[{values}])
    }}
    #[allow(unused_variables)]
    fn from_object(obj: &::ferry::ObjectRef) -> ::ferry::Result<Self> {{
        static FIELDS: ::ferry::FieldCache = ::ferry::FieldCache::new();
        let fields = FIELDS.getters::<Self>(obj, &[{names}])?;
        ::core::result::Result::Ok({name} {{ {reads} }})
    }}
    {defaults}
}}
impl ::ferry::FieldType for {name} {{
    fn type_text() -> ::std::string::String {{
        ::std::string::String::from({type_key:?})
    }}
}}
/// A new object of the type (registered on first use); panics only when the type cannot be
/// registered (its key taken by another declaration) or a field value does not convert.
impl ::ferry::IntoAny for {name} {{
    fn into_any(self) -> ::ferry::Any {{
        match <Self as ::ferry::Object>::to_object(&self) {{
            ::core::result::Result::Ok(obj) => ::ferry::IntoAny::into_any(obj),
            ::core::result::Result::Err(err) => ::core::panic!("{{}}", err),
        }}
    }}
}}
impl ::ferry::FromAny for {name} {{
    fn type_str() -> ::std::string::String {{
        ::std::string::String::from({type_key:?})
    }}
    fn from_view(view: &::ferry::AnyView<'_>) -> ::core::option::Option<Self> {{
        let obj: ::ferry::ObjectRef = view.cast().ok()?;
        <Self as ::ferry::Object>::from_object(&obj).ok()
    }}
}}
"#
    ))
}

/// The tokens of `stream` with each invisible group (`Delimiter::None`: what a macro_rules!
/// fragment such as `$key:literal` or `$attr:meta` reaches a derive wrapped in) replaced by
/// its tokens, so that `#[ferry(type_key = $key)]` reads as the literal it is.
fn flat(stream: TokenStream) -> Vec<TokenTree> {
    let mut out = Vec::new();
    for token in stream {
        match token {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => out.extend(flat(g.stream())),
            other => out.push(other),
        }
    }
    out
}

/// The type key of `ferry(type_key = "...")`, None for another attribute.
fn ferry_attribute(attr: TokenStream) -> Result<Option<String>, String> {
    let tokens = flat(attr);
    match tokens.first() {
        Some(TokenTree::Ident(id)) if id.to_string() == "ferry" => {}
        _ => return Ok(None),
    }
    let args: Vec<TokenTree> = match tokens.get(1) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => flat(g.stream()),
        _ => return Err("#[derive(ferry::Object)]: expected #[ferry(type_key = \"...\")]".into()),
    };
    match (args.first(), args.get(1), args.get(2), args.len()) {
        (Some(TokenTree::Ident(k)), Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(v)), 3)
            if k.to_string() == "type_key" && eq.as_char() == '=' =>
        {
            let text = v.to_string();
            let key = text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .ok_or("#[derive(ferry::Object)]: type_key must be a plain string literal")?;
            if key.is_empty() || key.contains('\\') {
                return Err(
                    "#[derive(ferry::Object)]: type_key must be a non-empty plain string literal"
                        .into(),
                );
            }
            Ok(Some(key.to_string()))
        }
        _ => Err(
            "#[derive(ferry::Object)]: expected #[ferry(type_key = \"...\")], the only option"
                .into(),
        ),
    }
}

/// `name: Type` pairs of a brace-delimited field list (attributes and visibility skipped).
fn parse_fields(body: TokenStream) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut depth = 0i32; // of `<...>` in types: their commas do not end a field
    for token in body {
        match &token {
            TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
            TokenTree::Punct(p) if p.as_char() == '>' && depth > 0 => depth -= 1,
            TokenTree::Punct(p) if p.as_char() == ',' && depth == 0 => {
                fields.push(field(std::mem::take(&mut current))?);
                continue;
            }
            _ => {}
        }
        current.push(token);
    }
    if !current.is_empty() {
        fields.push(field(current)?);
    }
    Ok(fields)
}

/// The default of a field attribute `ferry(default = EXPR)` / `ferry(default_factory = EXPR)`:
/// (whether a factory, EXPR); None for another attribute (`doc`, say).
fn field_attribute(attr: TokenStream, field: &str) -> Result<Option<(bool, String)>, String> {
    let tokens = flat(attr);
    match tokens.first() {
        Some(TokenTree::Ident(id)) if id.to_string() == "ferry" => {}
        _ => return Ok(None),
    }
    let usage = format!(
        "#[derive(ferry::Object)]: field {field}: expected #[ferry(default = EXPR)] or \
         #[ferry(default_factory = EXPR)]"
    );
    let args: Vec<TokenTree> = match (tokens.get(1), tokens.len()) {
        (Some(TokenTree::Group(g)), 2) if g.delimiter() == Delimiter::Parenthesis => {
            flat(g.stream())
        }
        _ => return Err(usage),
    };
    let factory = match (args.first(), args.get(1)) {
        (Some(TokenTree::Ident(k)), Some(TokenTree::Punct(eq)))
            if eq.as_char() == '=' && eq.spacing() == Spacing::Alone =>
        {
            match k.to_string().as_str() {
                "default" => false,
                "default_factory" => true,
                _ => return Err(usage),
            }
        }
        _ => return Err(usage),
    };
    let expr: TokenStream = args[2..].iter().cloned().collect();
    if expr.is_empty() {
        return Err(usage);
    }
    Ok(Some((factory, expr.to_string())))
}

fn field(tokens: Vec<TokenTree>) -> Result<Field, String> {
    let mut i = 0;
    let mut attrs = Vec::new();
    loop {
        match tokens.get(i) {
            Some(TokenTree::Punct(p)) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1) {
                    attrs.push(g.stream());
                }
                i += 2
            }
            Some(TokenTree::Ident(id)) if id.to_string() == "pub" => {
                i += 1;
                if let Some(TokenTree::Group(g)) = tokens.get(i) {
                    if g.delimiter() == Delimiter::Parenthesis {
                        i += 1;
                    }
                }
            }
            _ => break,
        }
    }
    let name = match tokens.get(i) {
        Some(TokenTree::Ident(id)) => id.to_string(),
        _ => return Err("#[derive(ferry::Object)]: expected a field name".into()),
    };
    match tokens.get(i + 1) {
        Some(TokenTree::Punct(p)) if p.as_char() == ':' => {}
        _ => {
            return Err(format!(
                "#[derive(ferry::Object)]: expected `:` after field {name}"
            ))
        }
    }
    let ty: TokenStream = tokens[i + 2..].iter().cloned().collect();
    if ty.is_empty() {
        return Err(format!(
            "#[derive(ferry::Object)]: field {name} has no type"
        ));
    }
    let mut default = None;
    for attr in attrs {
        if let Some(found) = field_attribute(attr, &name)? {
            if default.is_some() {
                return Err(format!(
                    "#[derive(ferry::Object)]: field {name} has more than one default"
                ));
            }
            default = Some(found);
        }
    }
    Ok(Field {
        name,
        ty: ty.to_string(),
        default,
    })
}

/// Registers a Rust `fn` as a global Function when the library (or program) holding it is
/// loaded, as `ferry::register_global!` does for closures: `#[ferry::export] fn add(a: i64,
/// b: i64) -> ferry::Result<i64>` is the global `add`, and `#[ferry::export(name =
/// "demo.add")]` names it. The function stays an ordinary Rust function.
///
/// Each argument is converted from the caller's value with an error naming its position, its
/// name and the expected type (`Mismatched type on argument 1 when calling `demo.add(a: int,
/// b: int)`: expected int but got ferry.String`). A return type whose last path segment is
/// `Result` is passed through (an `Err` reaches the caller as an error of its kind); any other
/// return type (or none) is a value.
#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand_export(attr, item.clone()) {
        Ok(code) => {
            let mut out = item;
            out.extend(
                code.parse::<TokenStream>()
                    .expect("#[ferry::export] generates valid Rust"),
            );
            out
        }
        Err(message) => format!("::core::compile_error!({message:?});")
            .parse()
            .unwrap(),
    }
}

/// The name of `#[ferry::export(name = "...")]`, None for a bare `#[ferry::export]`.
fn export_name(attr: TokenStream) -> Result<Option<String>, String> {
    let args: Vec<TokenTree> = attr.into_iter().collect();
    if args.is_empty() {
        return Ok(None);
    }
    match (args.first(), args.get(1), args.get(2), args.len()) {
        (Some(TokenTree::Ident(k)), Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(v)), 3)
            if k.to_string() == "name" && eq.as_char() == '=' =>
        {
            let text = v.to_string();
            let name = text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .filter(|t| !t.is_empty() && !t.contains('\\'))
                .ok_or("#[ferry::export]: name must be a non-empty plain string literal")?;
            Ok(Some(name.to_string()))
        }
        _ => Err(
            "#[ferry::export]: expected #[ferry::export] or #[ferry::export(name = \"...\")]"
                .into(),
        ),
    }
}

fn expand_export(attr: TokenStream, item: TokenStream) -> Result<String, String> {
    let name = export_name(attr)?;
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let mut i = 0;
    // Outer attributes, visibility and qualifiers up to `fn`.
    loop {
        match tokens.get(i) {
            Some(TokenTree::Punct(p)) if p.as_char() == '#' => i += 2,
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => i += 1,
            Some(TokenTree::Ident(id)) if id.to_string() == "pub" => i += 1,
            Some(TokenTree::Ident(id)) if id.to_string() == "fn" => break,
            Some(TokenTree::Ident(id))
                if ["async", "unsafe", "extern", "const"].contains(&id.to_string().as_str()) =>
            {
                return Err(format!(
                    "#[ferry::export] is for plain safe functions; this one is `{id}`"
                ))
            }
            _ => return Err("#[ferry::export] is for functions (`fn name(...)`)".into()),
        }
    }
    let fn_name = match tokens.get(i + 1) {
        Some(TokenTree::Ident(id)) => id.to_string(),
        _ => return Err("#[ferry::export]: expected the function's name".into()),
    };
    let params = match tokens.get(i + 2) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => g.stream(),
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => {
            return Err(format!(
                "#[ferry::export]: {fn_name} has generic parameters; an exported function has none"
            ))
        }
        _ => {
            return Err(format!(
                "#[ferry::export]: expected the parameters of {fn_name}"
            ))
        }
    };
    // The return type: tokens after `->` up to the body or a where clause.
    let mut returns_result = false;
    let mut j = i + 3;
    if let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
        (tokens.get(j), tokens.get(j + 1))
    {
        if a.as_char() == '-' && b.as_char() == '>' {
            j += 2;
            let mut depth = 0i32;
            let mut last_segment = String::new();
            while let Some(t) = tokens.get(j) {
                match t {
                    TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
                    TokenTree::Ident(id) if id.to_string() == "where" && depth == 0 => break,
                    TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
                    TokenTree::Punct(p) if p.as_char() == '>' => depth -= 1,
                    TokenTree::Ident(id) if depth == 0 => last_segment = id.to_string(),
                    _ => {}
                }
                j += 1;
            }
            returns_result = last_segment == "Result";
        }
    }
    if let Some(TokenTree::Ident(id)) = tokens.get(j) {
        if id.to_string() == "where" {
            return Err(format!(
                "#[ferry::export]: {fn_name} has a where clause; an exported function has none"
            ));
        }
    }
    let mut names = Vec::new();
    let mut types = Vec::new();
    for (index, param) in split_top_level(params).into_iter().enumerate() {
        let (pattern, ty) = split_param(&param).ok_or_else(|| {
            format!(
                "#[ferry::export]: parameter {index} of {fn_name} must be `name: Type` (no `self`)"
            )
        })?;
        names.push(pattern);
        types.push(ty);
    }
    if types.len() > 8 {
        return Err(format!(
            "#[ferry::export]: {fn_name} has {} parameters; at most 8 are supported",
            types.len()
        ));
    }
    let global = name.unwrap_or_else(|| fn_name.clone());
    let closure_params: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(k, t)| format!("__ferry_a{k}: {t}"))
        .collect();
    let call_args: Vec<String> = (0..types.len()).map(|k| format!("__ferry_a{k}")).collect();
    let call = format!("{fn_name}({})", call_args.join(", "));
    let body = if returns_result {
        call
    } else {
        format!("::core::result::Result::Ok({call})")
    };
    let name_list: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    Ok(format!(
        r#"
const _: () = {{
    extern "C" fn __ferry_export() {{
        ::ferry::__private::run_initializer(|| {{
            ::ferry::__private::register(
                {global:?},
                ::ferry::__private::named_function(
                    |{params}| -> ::ferry::Result<_> {{ {body} }},
                    {global:?},
                    &[{names}],
                ),
            );
        }});
    }}
    #[used]
    #[link_section = ".init_array"]
    static __FERRY_EXPORT: extern "C" fn() = __ferry_export;
}};
"#,
        params = closure_params.join(", "),
        names = name_list.join(", "),
    ))
}

/// The comma-separated parts of a parameter list (commas inside `<...>` kept).
fn split_top_level(stream: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut parts = Vec::new();
    let mut current = Vec::new();
    let mut depth = 0i32;
    for token in stream {
        match &token {
            TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
            TokenTree::Punct(p) if p.as_char() == '>' && depth > 0 => depth -= 1,
            TokenTree::Punct(p) if p.as_char() == ',' && depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(token);
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// `(name, Type)` of a `pattern: Type` parameter: the name is the pattern's text (`mut` and
/// attributes left out), the type everything after the first lone `:`.
fn split_param(tokens: &[TokenTree]) -> Option<(String, String)> {
    let mut k = 0;
    while let Some(TokenTree::Punct(p)) = tokens.get(k) {
        if p.as_char() != '#' {
            break;
        }
        k += 2;
    }
    let rest = &tokens[k.min(tokens.len())..];
    let colon = rest.iter().enumerate().position(|(n, t)| {
        matches!(t, TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == Spacing::Alone)
            && !matches!(n.checked_sub(1).and_then(|m| rest.get(m)),
                Some(TokenTree::Punct(q)) if q.as_char() == ':')
    })?;
    let pattern: Vec<String> = rest[..colon]
        .iter()
        .map(|t| t.to_string())
        .filter(|t| t != "mut")
        .collect();
    if pattern.is_empty() || pattern.iter().any(|t| t == "self") {
        return None;
    }
    let ty: TokenStream = rest[colon + 1..].iter().cloned().collect();
    if ty.is_empty() {
        return None;
    }
    Some((pattern.join(""), ty.to_string()))
}
